"""Long-term memory in process memory: the reference :class:`KnowledgeGraph` and a test double.

One episode per event, keyed by :func:`episode_uuid`, so writes are idempotent; preferences go
to the user's group, as on Graphiti; search ranks episodes by word overlap with the query.
Graphiti on FalkorDB is the real implementation;
``tests/contracts/test_knowledge_graph_contract.py`` runs one suite over both.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from plait.state.base.settings import os_user
from plait.state.events import EventKind, SessionEvent
from plait.state.groups import user_group_id
from plait.state.ports import GraphPicture, MemoryHit, episode_uuid

WORD = re.compile(r"[a-z0-9_]{2,}")


def words(text: str) -> set[str]:
    """Lower-case word set of a text."""
    return set(WORD.findall(text.lower()))


@dataclass
class InMemoryKnowledgeGraph:
    """Episodes per group in a dict."""

    prefix: str = "plait"
    user: str = field(default_factory=os_user)
    user_preferences: bool = True
    episodes: dict[str, dict[str, SessionEvent]] = field(default_factory=lambda: defaultdict(dict))

    def group_of(self, group_id: str, event: SessionEvent) -> str:
        """Where an event is kept: a preference in the user's group, the rest in ``group_id``."""
        if self.user_preferences and event.kind is EventKind.PREFERENCE:
            return user_group_id(self.prefix, event.member or self.user)
        return group_id

    async def write_episodes(self, group_id: str, events: Sequence[SessionEvent]) -> int:
        """Store events not stored before; return how many were new."""
        new = 0
        for event in events:
            group = self.group_of(group_id, event)
            key = episode_uuid(group, event)
            if key not in self.episodes[group]:
                self.episodes[group][key] = event
                new += 1
        return new

    async def forget_episodes(self, group_id: str, episode_uuids: Sequence[str]) -> int:
        """Drop the episodes the group holds."""
        held = self.episodes.get(group_id, {})
        return sum(held.pop(key, None) is not None for key in episode_uuids)

    async def picture(self, group_id: str, limit: int) -> GraphPicture:
        """No entities or facts (the twin keeps episodes only): how many episodes it holds."""
        return GraphPicture(episodes=len(self.episodes.get(group_id, {})))

    async def search(self, query: str, group_ids: Sequence[str], limit: int) -> list[MemoryHit]:
        """Episodes sharing words with the query, most shared first."""
        wanted = words(query)
        hits = []
        for group_id in group_ids:
            for key, event in self.episodes.get(group_id, {}).items():
                text = f"{event.kind.value}: {event.summary}"
                overlap = len(wanted & words(text + " " + " ".join(event.keywords)))
                if overlap:
                    kind = "preference" if event.kind is EventKind.PREFERENCE else "episode"
                    hits.append(
                        MemoryHit(
                            uuid=key,
                            kind=kind,
                            text=text,
                            score=overlap,
                            valid_at=event.time,
                            group_id=group_id,
                            episodes=(key,),
                        )
                    )
        return sorted(hits, key=lambda h: -h.score)[:limit]

    async def aclose(self) -> None:
        """Nothing to release."""


__all__ = ["InMemoryKnowledgeGraph"]
