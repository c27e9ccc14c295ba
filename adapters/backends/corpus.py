"""The per-root-session search corpus: SQLite FTS5, BM25 with stemming, trigram and typo fallback.

One file, ``<data_dir>/corpus.sqlite3`` (WAL). Text is cut into chunks of about 1-2 KB on headings
and paragraphs; each chunk goes into two FTS5 tables, ``porter unicode61`` (stemmed BM25) and
``trigram`` (substrings). A search runs the stemmed query, the trigram query and the query with
its unknown words replaced by their closest corpus words (typos), and fuses the three rankings
with reciprocal-rank fusion. Everything is redacted before it is stored: text, source names and
labels. Sync SQLite work runs in a worker thread.

The file does not grow for ever: sources indexed longer ago than the time to live are dropped
when the file is opened, a root session over its cap loses its oldest sources when it indexes
more, and the pages they held are given back to the file system (``auto_vacuum=INCREMENTAL``,
set on an older file by one ``VACUUM``). The file and its WAL and shared-memory files are the
owner's alone (0600).
"""

from __future__ import annotations

import asyncio
import difflib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from plait.adapters.backends.private_files import private_sqlite
from plait.state.corpus import (
    Chunk,
    ChunkHit,
    CorpusStats,
    IndexResult,
    SourceInfo,
    chunk_text,
    oldest_over,
    private_body,
    private_name,
    query_words,
    reciprocal_rank_fusion,
    utf8_len,
)

CORPUS_FILE = "corpus.sqlite3"
INCREMENTAL_VACUUM = 2
# Pages of full-text index segments merged after a removal (deleted rows leave tombstones there).
MERGE_PAGES = 2000
CANDIDATES_PER_RANKING = 50
FUZZY_CUTOFF = 0.75

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    source TEXT NOT NULL,
    label TEXT NOT NULL,
    chunk_no INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks (root, source, label, chunk_no);
CREATE INDEX IF NOT EXISTS chunks_by_age ON chunks (indexed_at);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_stemmed
    USING fts5 (title, text, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_trigram USING fts5 (title, text, tokenize = 'trigram');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocabulary USING fts5vocab (chunks_stemmed, 'row');
"""


# -- pure helpers -------------------------------------------------------------------------------
def fts_any(words: Iterable[str]) -> str:
    """An FTS5 query matching any of ``words``, each quoted (so no word is read as syntax)."""
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


def correct_words(words: Sequence[str], vocabulary: Sequence[str]) -> list[str]:
    """Each word not in ``vocabulary`` replaced by its closest vocabulary word, when one is close.

    Only words that change are returned: they form the typo-tolerant query.
    """
    known = set(vocabulary)
    corrected: list[str] = []
    for word in words:
        if word in known or len(word) < 4:
            continue
        candidates = [term for term in vocabulary if abs(len(term) - len(word)) <= 2]
        corrected.extend(difflib.get_close_matches(word, candidates, n=2, cutoff=FUZZY_CUTOFF))
    return list(dict.fromkeys(corrected))


# -- the store ----------------------------------------------------------------------------------
class SqliteCorpus:
    """The search corpus of every root session, in one SQLite file."""

    def __init__(self, path: Path, *, ttl_seconds: float = 0, max_bytes_per_root: int = 0) -> None:
        """Use :meth:`in_data_dir` for the standard location; the file opens on first use.

        Args:
            path: the SQLite file.
            ttl_seconds: sources indexed longer ago are dropped on open; 0 keeps everything.
            max_bytes_per_root: text a root session keeps (its oldest sources go first when it
                indexes more); 0 sets no cap.
        """
        self.path = path
        self.ttl_seconds = ttl_seconds
        self.max_bytes_per_root = max_bytes_per_root
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @classmethod
    def in_data_dir(
        cls, data_dir: Path, *, ttl_days: float = 0, max_bytes_per_root: int = 0
    ) -> SqliteCorpus:
        """The corpus at ``<data_dir>/corpus.sqlite3``."""
        return cls(
            Path(data_dir) / CORPUS_FILE,
            ttl_seconds=ttl_days * 86_400,
            max_bytes_per_root=max_bytes_per_root,
        )

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = private_sqlite(self.path)
            _use_incremental_vacuum(connection)
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(SCHEMA)
            if self.ttl_seconds > 0 and _expire(connection, time.time() - self.ttl_seconds):
                _give_back_space(connection)
            self._connection = connection
        return self._connection

    def close(self) -> None:
        """Close the file (it reopens on the next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def _run[T](self, work: Callable[..., T], *args: object) -> T:
        def locked() -> T:
            with self._lock:
                return work(self._connect(), *args)

        return await asyncio.to_thread(locked)

    # -- writing --------------------------------------------------------------------------------
    @property
    def location(self) -> str:
        """The SQLite file."""
        return str(self.path)

    async def index(self, root: str, source: str, text: str, *, label: str = "") -> IndexResult:
        """Index ``text`` as ``source`` of the root session; the same source and label replaces.

        Text, source and label are redacted first. Over ``max_bytes_per_root``, the root
        session's oldest sources are dropped (``evicted`` names them).
        """
        source, label = private_name(source), private_name(label)
        clean = private_body(text)
        chunks = chunk_text(clean)
        replaced = await self._run(_write_chunks, root, source, label, chunks)
        evicted = await self._run(_evict, root, (source, label), self.max_bytes_per_root)
        return IndexResult(
            source=source,
            label=label,
            chunks=len(chunks),
            bytes=utf8_len(clean),
            replaced=replaced,
            evicted=evicted,
        )

    async def remove(self, root: str, source: str, *, label: str = "") -> int:
        """Drop a source from the root session's corpus; returns how many chunks went."""
        source, label = private_name(source), private_name(label)
        removed = await self._run(_write_chunks, root, source, label, [])
        if removed:
            await self._run(_give_back_space)
        return removed

    # -- reading --------------------------------------------------------------------------------
    async def search(
        self, root: str, query: str, *, limit: int = 5, source: str | None = None
    ) -> list[ChunkHit]:
        """The best chunks for ``query``: stemmed, trigram and typo rankings fused."""
        words = query_words(query)
        if not words:
            return []
        source = None if source is None else private_name(source)
        return await self._run(_search, root, words, max(1, limit), source)

    async def chunk(self, root: str, source: str, chunk_no: int) -> ChunkHit | None:
        """One chunk by its reference parts."""
        return await self._run(_read_chunk, root, private_name(source), chunk_no)

    async def stats(self, root: str) -> CorpusStats:
        """How much the root session's corpus holds, per source."""
        return await self._run(_stats, root)


def _write_chunks(
    connection: sqlite3.Connection, root: str, source: str, label: str, chunks: list[Chunk]
) -> int:
    with connection:
        old = [
            row[0]
            for row in connection.execute(
                "SELECT id FROM chunks WHERE root = ? AND source = ? AND label = ?",
                (root, source, label),
            )
        ]
        for table in ("chunks", "chunks_stemmed", "chunks_trigram"):
            key = "id" if table == "chunks" else "rowid"
            connection.executemany(f"DELETE FROM {table} WHERE {key} = ?", [(i,) for i in old])
        now = time.time()
        for number, chunk in enumerate(chunks):
            cursor = connection.execute(
                "INSERT INTO chunks (root, source, label, chunk_no, title, text, indexed_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (root, source, label, number, chunk.title, chunk.text, now),
            )
            row = (cursor.lastrowid, chunk.title, chunk.text)
            connection.execute(
                "INSERT INTO chunks_stemmed (rowid, title, text) VALUES (?, ?, ?)", row
            )
            connection.execute(
                "INSERT INTO chunks_trigram (rowid, title, text) VALUES (?, ?, ?)", row
            )
    return len(old)


def _evict(
    connection: sqlite3.Connection, root: str, keep: tuple[str, str], cap: int
) -> tuple[str, ...]:
    """Drop the root session's oldest sources until its text fits ``cap``; their names."""
    if not cap:
        return ()
    rows = connection.execute(
        "SELECT source, label, sum(length(CAST(text AS BLOB))) FROM chunks WHERE root = ?"
        " GROUP BY source, label ORDER BY min(indexed_at), min(id)",
        (root,),
    ).fetchall()
    dropped = oldest_over([(s, lb, size or 0) for s, lb, size in rows], keep, cap)
    for source, label in dropped:
        _write_chunks(connection, root, source, label, [])
    if dropped:
        _give_back_space(connection)
    return tuple(source for source, _ in dropped)


def _use_incremental_vacuum(connection: sqlite3.Connection) -> None:
    """Let freed pages be given back to the file system (an older file is rewritten once)."""
    mode = connection.execute("PRAGMA auto_vacuum").fetchone()[0]
    if mode != INCREMENTAL_VACUUM:
        connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
        connection.execute("VACUUM")


def _give_back_space(connection: sqlite3.Connection) -> None:
    """Merge the full-text indices' segments and return the free pages to the file system.

    The WAL is checkpointed and truncated, so the pages leave the WAL file too.
    """
    with connection:
        for table in ("chunks_stemmed", "chunks_trigram"):
            connection.execute(
                f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (-MERGE_PAGES,)
            )
    connection.execute("PRAGMA incremental_vacuum").fetchall()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _expire(connection: sqlite3.Connection, before: float) -> int:
    """Drop the chunks indexed before ``before`` (epoch seconds); returns how many went."""
    with connection:
        old = [
            (row[0],)
            for row in connection.execute("SELECT id FROM chunks WHERE indexed_at < ?", (before,))
        ]
        connection.executemany("DELETE FROM chunks WHERE id = ?", old)
        connection.executemany("DELETE FROM chunks_stemmed WHERE rowid = ?", old)
        connection.executemany("DELETE FROM chunks_trigram WHERE rowid = ?", old)
    return len(old)


def _ranking(
    connection: sqlite3.Connection, table: str, match: str, root: str, source: str | None
) -> list[int]:
    if not match:
        return []
    sql = (
        f"SELECT c.id FROM {table} f CROSS JOIN chunks c ON c.id = f.rowid"
        f" WHERE {table} MATCH ? AND c.root = ?"
        + (" AND c.source = ?" if source is not None else "")
        + f" ORDER BY bm25({table}, 2.0, 1.0) LIMIT {CANDIDATES_PER_RANKING}"
    )
    params: tuple[str, ...] = (match, root) if source is None else (match, root, source)
    try:
        return [row[0] for row in connection.execute(sql, params)]
    except sqlite3.OperationalError:
        return []


def _known(connection: sqlite3.Connection, root: str, word: str) -> bool:
    """Whether the word (or its stem) occurs in the root session's corpus.

    ``CROSS JOIN`` keeps the full-text lookup first (the planner would otherwise walk every
    chunk of the root).
    """
    row = connection.execute(
        "SELECT 1 FROM chunks_stemmed f CROSS JOIN chunks c ON c.id = f.rowid"
        " WHERE chunks_stemmed MATCH ? AND c.root = ? LIMIT 1",
        (fts_any([word]), root),
    ).fetchone()
    return row is not None


def _vocabulary_near(connection: sqlite3.Connection, word: str) -> list[str]:
    """Corpus terms of about the word's length starting with its first or second letter.

    Range lookups on the vocabulary stay fast on a large corpus where a full scan does not; a
    typo in the first letter is left to the trigram ranking.
    """
    terms: list[str] = []
    for letter in dict.fromkeys(word[:2]):
        terms += [
            row[0]
            for row in connection.execute(
                "SELECT term FROM chunks_vocabulary WHERE term >= ? AND term < ?"
                " AND length(term) BETWEEN ? AND ?",
                (letter, chr(ord(letter) + 1), max(1, len(word) - 2), len(word) + 2),
            )
        ]
    return terms


def _typo_fixes(connection: sqlite3.Connection, root: str, words: Sequence[str]) -> list[str]:
    """Close corpus terms for the query words the root session's corpus does not know."""
    fixes: list[str] = []
    for word in words:
        if len(word) >= 4 and not _known(connection, root, word):
            # the vocabulary is shared by all roots: the word itself may come from another one
            near = [term for term in _vocabulary_near(connection, word) if term != word]
            fixes += correct_words([word], near)
    return list(dict.fromkeys(fixes))


def _search(
    connection: sqlite3.Connection, root: str, words: list[str], limit: int, source: str | None
) -> list[ChunkHit]:
    stemmed = _ranking(connection, "chunks_stemmed", fts_any(words), root, source)
    long_words = [word for word in words if len(word) >= 3]
    trigram = _ranking(connection, "chunks_trigram", fts_any(long_words), root, source)
    typos = _typo_fixes(connection, root, words)
    fuzzy = _ranking(connection, "chunks_stemmed", fts_any(typos), root, source)
    fused = reciprocal_rank_fusion([stemmed, trigram, fuzzy])[:limit]
    hits = []
    for chunk_id, score in fused:
        row = connection.execute(
            "SELECT source, label, chunk_no, title, text FROM chunks WHERE id = ?", (chunk_id,)
        ).fetchone()
        hits.append(_hit(row, score))
    return hits


def _hit(row: tuple[str, str, int, str, str], score: float) -> ChunkHit:
    source, label, chunk_no, title, text = row
    return ChunkHit(
        source=source, label=label, chunk_no=chunk_no, title=title, text=text, score=score
    )


def _read_chunk(
    connection: sqlite3.Connection, root: str, source: str, chunk_no: int
) -> ChunkHit | None:
    row = connection.execute(
        "SELECT source, label, chunk_no, title, text FROM chunks"
        " WHERE root = ? AND source = ? AND chunk_no = ? ORDER BY indexed_at DESC LIMIT 1",
        (root, source, chunk_no),
    ).fetchone()
    return None if row is None else _hit(row, 0.0)


def _stats(connection: sqlite3.Connection, root: str) -> CorpusStats:
    rows = connection.execute(
        "SELECT source, label, count(*), sum(length(CAST(text AS BLOB))) FROM chunks"
        " WHERE root = ? GROUP BY source, label ORDER BY min(indexed_at)",
        (root,),
    ).fetchall()
    sources = [
        SourceInfo(source=source, label=label, chunks=chunks, bytes=size or 0)
        for source, label, chunks, size in rows
    ]
    return CorpusStats(
        chunks=sum(info.chunks for info in sources),
        bytes=sum(info.bytes for info in sources),
        sources=sources,
    )


__all__ = [
    "CORPUS_FILE",
    "SqliteCorpus",
    "correct_words",
    "fts_any",
]
