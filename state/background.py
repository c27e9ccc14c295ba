"""State of the background graphs: drain and cache refresh. Both are bounded by batch size."""

from __future__ import annotations

from typing_extensions import TypedDict

from plait.state.hooks import CachedRecall
from plait.state.ports import MemoryHit, QueueEntry


class DrainState(TypedDict, total=False):
    """One drain run: a claimed batch, moved into Graphiti, acked or dead-lettered."""

    consumer: str
    claimed: int
    batch: list[QueueEntry]
    personal: dict[str, list[str]]
    episodes: list[list[QueueEntry]]
    attempt: int
    error: str | None
    unreachable: bool
    written: int
    dead_lettered: int


class RefreshState(TypedDict, total=False):
    """One cache refresh: search, rank, cache."""

    group_id: str
    root_session_id: str
    query: str
    hits: list[MemoryHit]
    recall: CachedRecall | None


__all__ = ["DrainState", "RefreshState"]
