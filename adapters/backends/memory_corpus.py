"""The session corpus in process memory: the reference :class:`~plait.state.corpus.Corpus`.

The twin of the SQLite corpus (and a fallback where no file can be written): the same chunks,
references, replacement and redaction, ranked by how many query words a chunk holds (no
stemming, substrings or typo tolerance: those are the SQLite corpus's own).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

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
    utf8_len,
)

WORD = re.compile(r"\w+", re.UNICODE)
Key = tuple[str, str]  # (source, label)


@dataclass
class InMemoryCorpus:
    """Chunks per root session, per (source, label), in the order they were indexed."""

    roots: dict[str, dict[Key, list[Chunk]]] = field(default_factory=lambda: defaultdict(dict))
    max_bytes_per_root: int = 0

    @property
    def location(self) -> str:
        """Nowhere on disk."""
        return "in memory"

    async def index(self, root: str, source: str, text: str, *, label: str = "") -> IndexResult:
        """Index ``text`` as ``source``; the same source and label replaces; oldest go over cap."""
        source, label = private_name(source), private_name(label)
        clean = private_body(text)
        chunks = chunk_text(clean)
        replaced = await self.remove(root, source, label=label)
        if chunks:
            self.roots[root][(source, label)] = chunks
        evicted = self._evict(root, (source, label))
        size = utf8_len(clean)
        return IndexResult(
            source=source,
            label=label,
            chunks=len(chunks),
            bytes=size,
            replaced=replaced,
            evicted=evicted,
        )

    def _evict(self, root: str, keep: Key) -> tuple[str, ...]:
        """Drop the root's oldest sources until it fits its cap."""
        sizes = [
            (name, label, sum(utf8_len(chunk.text) for chunk in chunks))
            for (name, label), chunks in self.roots[root].items()
        ]
        dropped = oldest_over(sizes, keep, self.max_bytes_per_root)
        for key in dropped:
            del self.roots[root][key]
        return tuple(name for name, _ in dropped)

    async def remove(self, root: str, source: str, *, label: str = "") -> int:
        """Drop a source; returns how many chunks went."""
        return len(self.roots[root].pop((private_name(source), private_name(label)), []))

    async def search(
        self, root: str, query: str, *, limit: int = 5, source: str | None = None
    ) -> list[ChunkHit]:
        """Chunks holding the most query words first."""
        wanted = set(query_words(query))
        source = None if source is None else private_name(source)
        hits = []
        for (name, label), chunks in self.roots.get(root, {}).items():
            if source is not None and name != source:
                continue
            for number, chunk in enumerate(chunks):
                words = {w.lower() for w in WORD.findall(f"{chunk.title} {chunk.text}")}
                if shared := len(wanted & words):
                    hits.append(hit(name, label, number, chunk, float(shared)))
        return sorted(hits, key=lambda h: -h.score)[: max(1, limit)]

    async def chunk(self, root: str, source: str, chunk_no: int) -> ChunkHit | None:
        """One chunk by its reference parts (the newest label's, as in SQLite)."""
        source = private_name(source)
        for (name, label), chunks in reversed(self.roots.get(root, {}).items()):
            if name == source and 0 <= chunk_no < len(chunks):
                return hit(name, label, chunk_no, chunks[chunk_no], 0.0)
        return None

    async def stats(self, root: str) -> CorpusStats:
        """How much the root session's corpus holds, per source."""
        sources = [
            SourceInfo(
                source=name,
                label=label,
                chunks=len(chunks),
                bytes=sum(utf8_len(chunk.text) for chunk in chunks),
            )
            for (name, label), chunks in self.roots.get(root, {}).items()
        ]
        return CorpusStats(
            chunks=sum(info.chunks for info in sources),
            bytes=sum(info.bytes for info in sources),
            sources=sources,
        )

    def close(self) -> None:
        """Nothing to release."""


def hit(source: str, label: str, number: int, chunk: Chunk, score: float) -> ChunkHit:
    """A chunk as a search hit."""
    return ChunkHit(
        source=source,
        label=label,
        chunk_no=number,
        title=chunk.title,
        text=chunk.text,
        score=score,
    )


__all__ = ["InMemoryCorpus"]
