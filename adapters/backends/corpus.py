"""The per-root-session search corpus: SQLite FTS5, BM25 with stemming, trigram and typo fallback.

One file, ``<data_dir>/corpus.sqlite3`` (WAL). Text is cut into chunks of about 1-2 KB on headings
and paragraphs; each chunk goes into two FTS5 tables, ``porter unicode61`` (stemmed BM25) and
``trigram`` (substrings). A search runs the stemmed query, the trigram query and the query with
its unknown words replaced by their closest corpus words (typos), and fuses the three rankings
with reciprocal-rank fusion. Everything is redacted before it is stored. Sync SQLite work runs in
a worker thread. Sources indexed longer ago than the time to live are dropped when the file is
opened, so the file does not grow for ever.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from plait.redact import redact
from plait.state.events import clean_text

CORPUS_FILE = "corpus.sqlite3"
CHUNK_TARGET_BYTES = 1536
CHUNK_MAX_BYTES = 2048
RRF_K = 60
CANDIDATES_PER_RANKING = 50
FUZZY_CUTOFF = 0.75
QUERY_WORDS_MAX = 16
HEADING = re.compile(r"^#{1,6}\s+\S")
WORD = re.compile(r"\w+", re.UNICODE)

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


@dataclass(frozen=True, kw_only=True, slots=True)
class Chunk:
    """One piece of an indexed text, under the heading it belongs to."""

    title: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class IndexResult:
    """What indexing one source did."""

    source: str
    label: str
    chunks: int
    bytes: int
    replaced: int

    @property
    def reference(self) -> str:
        """The reference of the source's first chunk."""
        return reference_for(self.source, 0)


@dataclass(frozen=True, kw_only=True, slots=True)
class ChunkHit:
    """One chunk that matched a search, best first."""

    source: str
    label: str
    chunk_no: int
    title: str
    text: str
    score: float

    @property
    def reference(self) -> str:
        """``corpus:<source>#<chunk>``."""
        return reference_for(self.source, self.chunk_no)


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceInfo:
    """One indexed source of a root session."""

    source: str
    label: str
    chunks: int
    bytes: int


@dataclass(frozen=True, kw_only=True, slots=True)
class CorpusStats:
    """The size of a root session's corpus."""

    chunks: int
    bytes: int
    sources: list[SourceInfo]


# -- pure helpers -------------------------------------------------------------------------------
def reference_for(source: str, chunk_no: int) -> str:
    """``corpus:<source>#<chunk>``: how answers point into the corpus."""
    return f"corpus:{source}#{chunk_no}"


def utf8_len(text: str) -> int:
    """Size of ``text`` in UTF-8 bytes."""
    return len(text.encode("utf-8", errors="replace"))


def split_blocks(text: str) -> list[tuple[str, str]]:
    """Paragraphs as ``(heading in force, paragraph)``; a heading line is a block of its own."""
    blocks: list[tuple[str, str]] = []
    title = ""
    lines: list[str] = []

    def flush() -> None:
        if any(line.strip() for line in lines):
            blocks.append((title, "\n".join(lines).strip("\n")))
        lines.clear()

    for line in text.splitlines():
        if HEADING.match(line):
            flush()
            title = line.lstrip("#").strip()
            blocks.append((title, line))
        elif not line.strip():
            flush()
        else:
            lines.append(line)
    flush()
    return blocks


def hard_split(text: str, max_bytes: int) -> list[str]:
    """Cut an oversized block on line ends, and lines longer than ``max_bytes`` anywhere."""
    pieces: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while utf8_len(line) > max_bytes:
            cut = line.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
            pieces.append(cut)
            line = line[len(cut) :]
        if current and utf8_len(current) + utf8_len(line) > max_bytes:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return [piece.strip("\n") for piece in pieces if piece.strip()]


def chunk_text(
    text: str, target_bytes: int = CHUNK_TARGET_BYTES, max_bytes: int = CHUNK_MAX_BYTES
) -> list[Chunk]:
    """Cut a text into chunks of about ``target_bytes`` (never above ``max_bytes``).

    A heading starts a new chunk once the current one holds a fair amount; paragraphs are never
    split unless one alone exceeds ``max_bytes``.
    """
    chunks: list[Chunk] = []
    parts: list[str] = []
    title = ""
    size = 0

    def flush() -> None:
        nonlocal size
        if parts:
            chunks.append(Chunk(title=title, text="\n\n".join(parts)))
        parts.clear()
        size = 0

    for block_title, block in split_blocks(text):
        is_heading = block_title and HEADING.match(block) is not None
        if is_heading and size >= target_bytes // 4:
            flush()
        for piece in hard_split(block, max_bytes) if utf8_len(block) > max_bytes else [block]:
            grown = size + utf8_len(piece) + 2
            if parts and (grown > max_bytes or size >= target_bytes):
                flush()
            if not parts:
                title = block_title
            parts.append(piece)
            size += utf8_len(piece) + 2
    flush()
    return chunks


def query_words(query: str) -> list[str]:
    """The distinct lowercase words of a query, at most :data:`QUERY_WORDS_MAX`."""
    words = [word.lower() for word in WORD.findall(query)]
    return list(dict.fromkeys(words))[:QUERY_WORDS_MAX]


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


def reciprocal_rank_fusion(
    rankings: Iterable[Sequence[int]], k: int = RRF_K
) -> list[tuple[int, float]]:
    """Fuse ranked id lists: each id scores ``sum(1 / (k + rank))``, best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def snippet(text: str, words: Sequence[str], width: int) -> str:
    """About ``width`` characters of ``text`` around the first query word (or its stem)."""
    if len(text) <= width:
        return text
    lowered = text.lower()
    positions = [lowered.find(stem) for stem in (word[: max(3, len(word) - 3)] for word in words)]
    found = [position for position in positions if position >= 0]
    start = max(0, min(found) - width // 4) if found else 0
    start = min(start, len(text) - width)
    excerpt = text[start : start + width]
    return ("…" if start > 0 else "") + excerpt + ("…" if start + width < len(text) else "")


# -- the store ----------------------------------------------------------------------------------
class Corpus:
    """The search corpus of every root session, in one SQLite file."""

    def __init__(self, path: Path, *, ttl_seconds: float = 0) -> None:
        """Use :meth:`in_data_dir` for the standard location; the file opens on first use.

        Args:
            path: the SQLite file.
            ttl_seconds: sources indexed longer ago are dropped on open; 0 keeps everything.
        """
        self.path = path
        self.ttl_seconds = ttl_seconds
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @classmethod
    def in_data_dir(cls, data_dir: Path, *, ttl_days: float = 0) -> Corpus:
        """The corpus at ``<data_dir>/corpus.sqlite3``."""
        return cls(Path(data_dir) / CORPUS_FILE, ttl_seconds=ttl_days * 86_400)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, check_same_thread=False, timeout=10)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(SCHEMA)
            if self.ttl_seconds > 0:
                _expire(connection, time.time() - self.ttl_seconds)
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
    async def index(self, root: str, source: str, text: str, *, label: str = "") -> IndexResult:
        """Index ``text`` as ``source`` of the root session; the same source and label replaces."""
        clean = redact(clean_text(text))
        chunks = chunk_text(clean)
        replaced = await self._run(_write_chunks, root, source, label, chunks)
        return IndexResult(
            source=source, label=label, chunks=len(chunks), bytes=utf8_len(clean), replaced=replaced
        )

    async def remove(self, root: str, source: str, *, label: str = "") -> int:
        """Drop a source from the root session's corpus; returns how many chunks went."""
        return await self._run(_write_chunks, root, source, label, [])

    # -- reading --------------------------------------------------------------------------------
    async def search(
        self, root: str, query: str, *, limit: int = 5, source: str | None = None
    ) -> list[ChunkHit]:
        """The best chunks for ``query``: stemmed, trigram and typo rankings fused."""
        words = query_words(query)
        if not words:
            return []
        return await self._run(_search, root, words, max(1, limit), source)

    async def chunk(self, root: str, source: str, chunk_no: int) -> ChunkHit | None:
        """One chunk by its reference parts."""
        return await self._run(_read_chunk, root, source, chunk_no)

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
    "Chunk",
    "Corpus",
    "CorpusStats",
    "IndexResult",
    "ChunkHit",
    "SourceInfo",
    "chunk_text",
    "correct_words",
    "fts_any",
    "query_words",
    "reciprocal_rank_fusion",
    "reference_for",
    "snippet",
]
