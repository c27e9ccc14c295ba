"""The session corpus's data: chunks, hits and stats, how texts are cut into chunks, the port.

Pure (no I/O): the SQLite implementation (:mod:`plait.adapters.backends.corpus`) and its
in-memory twin (:mod:`plait.adapters.backends.memory_corpus`) share it, and one contract suite
runs over both (``tests/contracts/test_corpus_contract.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from plait.state.base.redact import redact
from plait.state.events import as_text, clean_text

CHUNK_TARGET_BYTES = 1536
CHUNK_MAX_BYTES = 2048
RRF_K = 60
QUERY_WORDS_MAX = 16
NAME_MAX_CHARS = 512
HEADING = re.compile(r"^#{1,6}\s+\S")
WORD = re.compile(r"\w+", re.UNICODE)


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
    evicted: tuple[str, ...] = ()

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


@runtime_checkable
class Corpus(Protocol):
    """The search corpus of every root session: indexed output, searched by words."""

    async def index(self, root: str, source: str, text: str, *, label: str = "") -> IndexResult:
        """Index ``text`` as ``source``; the same source and label replaces.

        Text, source and label are redacted first (:func:`private_name`). When the root
        session's corpus grows over its cap, its oldest sources go (``evicted`` names them).
        """
        ...

    async def remove(self, root: str, source: str, *, label: str = "") -> int:
        """Drop a source; returns how many chunks went."""
        ...

    async def search(
        self, root: str, query: str, *, limit: int = 5, source: str | None = None
    ) -> list[ChunkHit]:
        """The best chunks of the root session for ``query``, best first."""
        ...

    async def chunk(self, root: str, source: str, chunk_no: int) -> ChunkHit | None:
        """One chunk by its reference parts."""
        ...

    async def stats(self, root: str) -> CorpusStats:
        """How much the root session's corpus holds, per source."""
        ...

    @property
    def location(self) -> str:
        """Where it keeps its chunks, for a person reading a report (a file, or memory)."""
        ...

    def close(self) -> None:
        """Release what it holds open."""
        ...


# -- pure helpers -------------------------------------------------------------------------------
def private_name(name: str) -> str:
    """A source name or label as the corpus keeps it: secrets redacted, one line, capped.

    Deterministic, so a caller naming a source the way it indexed it finds it again.
    """
    cleaned = redact(" ".join(clean_text(as_text(name, NAME_MAX_CHARS * 4)).split()))
    return cleaned[:NAME_MAX_CHARS]


def private_body(text: str) -> str:
    """Text as the corpus keeps it: private spans and secrets redacted."""
    return redact(clean_text(text))


def oldest_over(
    sizes: Sequence[tuple[str, str, int]], keep: tuple[str, str], cap: int
) -> list[tuple[str, str]]:
    """Which ``(source, label)`` to drop, oldest first, for the total to fit ``cap``.

    ``sizes`` are ``(source, label, bytes)``, oldest first; ``keep`` is never dropped (the
    source just indexed); a ``cap`` of 0 drops nothing.
    """
    total = sum(size for _, _, size in sizes)
    dropped: list[tuple[str, str]] = []
    for source, label, size in sizes:
        if not cap or total <= cap:
            break
        if (source, label) != keep:
            dropped.append((source, label))
            total -= size
    return dropped


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


__all__ = [
    "CHUNK_MAX_BYTES",
    "CHUNK_TARGET_BYTES",
    "Chunk",
    "ChunkHit",
    "Corpus",
    "CorpusStats",
    "IndexResult",
    "SourceInfo",
    "chunk_text",
    "oldest_over",
    "private_body",
    "private_name",
    "query_words",
    "reciprocal_rank_fusion",
    "reference_for",
    "snippet",
    "utf8_len",
]
