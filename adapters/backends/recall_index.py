"""The recall index in one SQLite file per data dir (``<data_dir>/recall.sqlite3``, WAL).

Rows are the truth: ``turns`` (one per indexed event, in the order they were added) and
``vectors`` (float16, one per turn and dense view, with the model and a digest of the text it
was computed from; a turn's first-stage vector is its view ``first_stage``). Ranking runs in
memory: a group's rows are loaded into the structures of
:class:`~plait.adapters.backends.memory_recall.InMemoryRecallIndex` the first time the group is
touched, and every change is written through. SQLite work and ranking run in a worker thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple, TypeVar, cast

import numpy as np

from plait.adapters.backends.memory_recall import InMemoryRecallIndex, text_digest
from plait.adapters.backends.private_files import private_sqlite
from plait.state.ranking import QueryVector
from plait.state.recall import (
    EmbeddingJob,
    FirstStageEmbedder,
    IndexedTurn,
    IndexStats,
    TurnHit,
)

RECALL_FILE = "recall.sqlite3"
FIRST_STAGE_VIEW = "first_stage"
T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    added INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    group_id TEXT NOT NULL,
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    said_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_group ON turns (group_id, added);
CREATE TABLE IF NOT EXISTS vectors (
    turn_id TEXT NOT NULL,
    view TEXT NOT NULL,
    model TEXT NOT NULL,
    digest TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (turn_id, view)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# how many times rows were removed: a removal may let SQLite give a later row a place in the
# file that was read already, so a reader that sees this change reads its groups again
REMOVALS = "removals"
TURN_COLUMNS = "id, group_id, session, seq, said_at, kind, key, text"
OLD_VIEWS = "('with_previous', 'with_both')"
VECTOR_INSERT = "INSERT OR REPLACE INTO vectors VALUES (?,?,?,?,?)"


def turn_row(turn: IndexedTurn) -> tuple[object, ...]:
    """A turn as a row of ``turns`` (without ``added``)."""
    return (
        turn.id,
        turn.group_id,
        turn.session,
        turn.seq,
        turn.said_at.isoformat(),
        turn.kind,
        turn.key,
        turn.text,
    )


def vector_row(
    turn_id: str, view: str, model: str, text: str, vector: np.ndarray
) -> tuple[object, ...]:
    """A vector as a row of ``vectors``: float16, with a digest of the text it was made from."""
    return (turn_id, view, model, text_digest(text), np.asarray(vector, np.float16).tobytes())


def row_turn(row: Sequence[object]) -> IndexedTurn:
    """A row of ``turns`` as a turn."""
    turn_id, group_id, session, seq, said_at, kind, key, text = row
    return IndexedTurn(
        id=str(turn_id),
        group_id=str(group_id),
        session=str(session),
        seq=int(seq),  # type: ignore[call-overload]
        said_at=datetime.fromisoformat(str(said_at)),
        kind=str(kind),
        key=str(key),
        text=str(text),
    )


VECTOR_SELECT = (
    "SELECT v.turn_id, v.view, v.model, v.digest, v.vector FROM vectors v "
    "JOIN turns t ON t.id = v.turn_id"
)


class Marks(NamedTuple):
    """How far a process has read the file: the newest turn's and vector's place, removals."""

    turns: int = 0
    vectors: int = 0
    removals: int = 0


def marks(connection: sqlite3.Connection) -> Marks:
    """Where the file stands now (see :class:`Marks`)."""
    turns = connection.execute("SELECT COALESCE(MAX(added), 0) FROM turns").fetchone()[0]
    vectors = connection.execute("SELECT COALESCE(MAX(rowid), 0) FROM vectors").fetchone()[0]
    removals = connection.execute("SELECT value FROM meta WHERE key = ?", (REMOVALS,)).fetchone()
    return Marks(int(turns), int(vectors), int(removals[0]) if removals else 0)


def count_removal(connection: sqlite3.Connection) -> None:
    """Note, inside the removing transaction, that rows were removed (see :data:`REMOVALS`)."""
    connection.execute(
        "INSERT INTO meta VALUES (?, 1) ON CONFLICT(key) DO UPDATE SET value = value + 1",
        (REMOVALS,),
    )


class SqliteRecallIndex(InMemoryRecallIndex):
    """The in-memory index, loaded per group from a SQLite file and written through to it."""

    def __init__(
        self,
        path: Path,
        *,
        vector_model: str | None = None,
        first_stage: FirstStageEmbedder | None = None,
    ) -> None:
        """The index in ``path`` (opened on first use) keeping vectors of ``vector_model``.

        ``first_stage``: embeds each turn as it is added (see :class:`InMemoryRecallIndex`).
        """
        super().__init__(vector_model=vector_model, first_stage=first_stage)
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._loaded: set[str] = set()
        self._lock = threading.Lock()
        self._data_version: int | None = None
        self._marks = Marks()  # how far this process has read the file

    @classmethod
    def in_data_dir(
        cls,
        data_dir: Path,
        *,
        vector_model: str | None = None,
        first_stage: FirstStageEmbedder | None = None,
    ) -> SqliteRecallIndex:
        """The index at ``<data_dir>/recall.sqlite3``."""
        return cls(Path(data_dir) / RECALL_FILE, vector_model=vector_model, first_stage=first_stage)

    # -- plumbing -------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = private_sqlite(self.path)
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(SCHEMA)
            with connection:  # vectors of window texts: the layout before each turn's own
                old = connection.execute(f"DELETE FROM vectors WHERE view IN {OLD_VIEWS}")
                if old.rowcount:
                    count_removal(connection)
            self._connection = connection
        return self._connection

    async def _run(self, work: Callable[[], T]) -> T:
        def locked() -> T:
            with self._lock:
                return work()

        return await asyncio.to_thread(locked)

    def _load(self, group_ids: Iterable[str]) -> None:
        """Read the groups not read yet into memory, and what others wrote since.

        When another process wrote the file (a worker drained turns or stored vectors, ``plait
        memory forget`` removed some), only what changed is read (:meth:`_catch_up`): this
        process never serves a turn that is gone, and sees the turns and vectors others added.
        Vectors: the turns found in a group the first time this process reads it that have
        none yet are queued to be embedded (left by a process that stopped); after that, a
        turn another process added is that process's to embed (its vectors are read as they
        come), and only this process's own turns are queued here: several replicas and workers
        on one file embed each turn once.
        """
        connection = self._connect()
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        if self._data_version is not None and version != self._data_version:
            self._catch_up(connection)
        self._data_version = version
        for group_id in dict.fromkeys(group_ids):
            if group_id in self._loaded:
                continue
            if not self._loaded:
                self._marks = marks(connection)
            self._loaded.add(group_id)
            rows = connection.execute(
                f"SELECT {TURN_COLUMNS} FROM turns WHERE group_id = ? ORDER BY added", (group_id,)
            ).fetchall()
            for row in rows:
                self.place(row_turn(row))  # without a vector yet: left by a process that stopped
            self._keep_stored(
                connection.execute(
                    f"{VECTOR_SELECT} WHERE t.group_id = ? AND v.model IN (?, ?)",
                    (group_id, *self._models()),
                )
            )

    def _catch_up(self, connection: sqlite3.Connection) -> None:
        """Read what other processes wrote since the last read, for the groups held here.

        Turns and vectors whose place in the file is past :attr:`_marks` (rows this process
        wrote come back too, and are known already). When rows were removed since (``plait
        memory forget``), every group is read again the next time it is used: removing can let
        SQLite reuse a place already read. Reading everything again after each write, as before,
        took as long as indexing every turn anew (tens of seconds at 100,000 turns).
        """
        now = marks(connection)
        if now.removals != self._marks.removals:
            InMemoryRecallIndex.__init__(
                self, vector_model=self.vector_model, first_stage=self.first_stage
            )
            self._loaded.clear()
            return
        loaded = sorted(self._loaded)
        if not loaded:
            self._marks = now
            return
        held = ",".join("?" * len(loaded))
        rows = connection.execute(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE added > ? AND group_id IN ({held}) "
            "ORDER BY added",
            (self._marks.turns, *loaded),
        ).fetchall()
        for row in rows:
            turn = row_turn(row)
            if turn.id not in self._turns:
                self.place(turn, embed=False)
        self._keep_stored(
            connection.execute(
                f"{VECTOR_SELECT} WHERE v.rowid > ? AND t.group_id IN ({held}) "
                "AND v.model IN (?, ?)",
                (self._marks.vectors, *loaded, *self._models()),
            )
        )
        self._marks = now

    def _models(self) -> tuple[str, str]:
        """The recall embedder's and the first stage's model names ("" for none)."""
        return self.vector_model or "", self.first_stage.name if self.first_stage else ""

    def _keep_stored(self, rows: Iterable[Sequence[object]]) -> None:
        """Put stored vectors (``VECTOR_SELECT`` rows) in place when still true to their texts."""
        recall_model, first_stage = self._models()
        for turn_id, view, model, digest, blob in rows:
            turn_id, view, digest = str(turn_id), str(view), str(digest)
            vector = np.frombuffer(cast(bytes, blob), dtype=np.float16).astype(np.float32)
            if model == recall_model:
                text = self.view_text(turn_id, view)
                if text is not None and text_digest(text) == digest:
                    self.keep_vector(turn_id, view, digest, vector)
            elif model == first_stage and view == FIRST_STAGE_VIEW:
                text = self.view_text(turn_id, "turn")
                if text is not None and text_digest(text) == digest:
                    self.keep_first_stage_vector(turn_id, vector)

    # -- the port, written through --------------------------------------------------------------
    async def add_turns(self, turns: Sequence[IndexedTurn]) -> int:
        """Index turns (idempotent by id) and write the new ones; how many were new."""

        def add() -> int:
            self._load({turn.group_id for turn in turns})
            fresh = self.fresh(turns)
            if not fresh:
                return 0
            for turn in fresh:
                self.place(turn)
            first_stage = self.embed_first_stage(fresh)
            connection = self._connect()
            with connection:
                connection.executemany(
                    f"INSERT OR IGNORE INTO turns ({TURN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [turn_row(t) for t in fresh],
                )
                if first_stage is not None and self.first_stage is not None:
                    model = self.first_stage.name
                    connection.executemany(
                        VECTOR_INSERT,
                        [
                            vector_row(turn.id, FIRST_STAGE_VIEW, model, turn.text, vector)
                            for turn, vector in zip(fresh, first_stage, strict=True)
                        ],
                    )
            return len(fresh)

        return await self._run(add)

    async def search_turns(
        self,
        query: str,
        group_ids: Sequence[str],
        limit: int,
        *,
        query_vector: QueryVector = None,
        now: datetime | None = None,
    ) -> list[TurnHit]:
        """Rank the groups' turns (loading them first)."""

        def search() -> list[TurnHit]:
            self._load(group_ids)
            return self.search_now(query, group_ids, limit, query_vector=query_vector, now=now)

        return await self._run(search)

    async def newest_turns(
        self, group_ids: Sequence[str], kinds: Sequence[str], limit: int
    ) -> list[TurnHit]:
        """The newest current turns of the kinds (loading the groups first)."""

        def newest() -> list[TurnHit]:
            self._load(group_ids)
            return self.newest_now(group_ids, kinds, limit)

        return await self._run(newest)

    async def pending_embeddings(self, limit: int) -> list[EmbeddingJob]:
        """Views to embed in the groups this process has touched."""
        return await self._run(lambda: self.pending_now(limit))

    async def store_vectors(self, jobs: Sequence[EmbeddingJob], vectors: np.ndarray) -> int:
        """Keep and write the vectors whose text is still the view's text."""
        model = self.vector_model

        def store() -> int:
            wanted = self.current(jobs, vectors)
            if model is None or not wanted:
                return 0
            connection = self._connect()
            with connection:
                connection.executemany(
                    VECTOR_INSERT,
                    [
                        vector_row(job.turn_id, job.view, model, job.text, vector)
                        for job, vector in wanted
                    ],
                )
            return self.keep_vectors(wanted)

        return await self._run(store)

    async def forget_turns(self, turn_ids: Sequence[str]) -> int:
        """Remove turns from the file and from memory."""

        def forget() -> int:
            connection = self._connect()
            ids = list(dict.fromkeys(turn_ids))
            held = ",".join("?" * len(ids))
            groups = [
                row[0]
                for row in connection.execute(
                    f"SELECT DISTINCT group_id FROM turns WHERE id IN ({held})", ids
                )
            ]
            self._load(groups)
            with connection:
                gone = connection.execute(f"DELETE FROM turns WHERE id IN ({held})", ids).rowcount
                vectors = connection.execute(
                    f"DELETE FROM vectors WHERE turn_id IN ({held})", ids
                ).rowcount
                if gone or vectors:  # nothing removed: no reader needs to read again
                    count_removal(connection)
            self.forget_now(ids)
            return gone

        return await self._run(forget) if turn_ids else 0

    async def stats(self) -> IndexStats:
        """Counts from the file (every group, loaded or not)."""

        def count() -> IndexStats:
            connection = self._connect()
            turns, groups = connection.execute(
                "SELECT COUNT(*), COUNT(DISTINCT group_id) FROM turns"
            ).fetchone()
            model = self.vector_model or ""
            (vectors,) = connection.execute(
                "SELECT COUNT(*) FROM vectors WHERE model = ?", (model,)
            ).fetchone()
            return IndexStats(
                turns=turns,
                groups=groups,
                vectors=vectors,
                pending_vectors=self.stats_now().pending_vectors,
            )

        return await self._run(count)

    async def aclose(self) -> None:
        """Close the file (it reopens on the next use)."""

        def close() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

        await self._run(close)


__all__ = ["FIRST_STAGE_VIEW", "RECALL_FILE", "SqliteRecallIndex"]
