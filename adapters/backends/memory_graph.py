"""Long-term memory in process memory: the reference :class:`KnowledgeGraph` and a test double.

One episode per event, keyed by :func:`episode_uuid`, so writes are idempotent; search ranks
episodes by word overlap with the query. Graphiti on FalkorDB is the real implementation.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from plait.nodes.drain import episode_uuid
from plait.nodes.ports import MemoryHit
from plait.state.events import SessionEvent

WORD = re.compile(r"[a-z0-9_]{2,}")


def words(text: str) -> set[str]:
    """Lower-case word set of a text."""
    return set(WORD.findall(text.lower()))


@dataclass
class InMemoryKnowledgeGraph:
    """Episodes per group in a dict."""

    episodes: dict[str, dict[str, SessionEvent]] = field(default_factory=lambda: defaultdict(dict))

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Store events not stored before; return how many were new."""
        stored = self.episodes[group_id]
        new = 0
        for event in events:
            key = episode_uuid(group_id, event)
            if key not in stored:
                stored[key] = event
                new += 1
        return new

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Episodes sharing words with the query, most shared first."""
        wanted = words(query)
        hits = []
        for group_id in group_ids:
            for key, event in self.episodes.get(group_id, {}).items():
                text = f"{event.kind.value}: {event.summary}"
                overlap = len(wanted & words(text + " " + " ".join(event.keywords)))
                if overlap:
                    hits.append(MemoryHit(uuid=key, kind="episode", text=text, score=overlap))
        return sorted(hits, key=lambda h: -h.score)[:limit]

    async def aclose(self) -> None:
        """Nothing to release."""


__all__ = ["InMemoryKnowledgeGraph"]
