"""State of the background graphs: drain and cache refresh. Both are bounded by batch size."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from plait.state.events import SessionEvent
from plait.state.hooks import CachedRecall


class ClaimedEvent(BaseModel):
    """An event claimed from the drain queue (checkpointable form of a queue entry)."""

    model_config = ConfigDict(frozen=True)

    entry_id: str
    group_id: str
    event: SessionEvent
    deliveries: int


class DrainState(TypedDict, total=False):
    """One drain run: a claimed batch, moved into Graphiti, acked or dead-lettered."""

    consumer: str
    claimed: int
    batch: list[ClaimedEvent]
    episodes: list[list[ClaimedEvent]]
    attempt: int
    error: str | None
    unreachable: bool
    written: int
    dead_lettered: int


class Hit(BaseModel):
    """A search hit in checkpointable form."""

    model_config = ConfigDict(frozen=True)

    uuid: str
    kind: str
    text: str
    score: float
    valid_at: datetime | None = None
    is_current: bool = True


class RefreshState(TypedDict, total=False):
    """One cache refresh: search, rank, cache."""

    group_id: str
    root_session_id: str
    query: str
    hits: list[Hit]
    recall: CachedRecall | None


__all__ = ["ClaimedEvent", "DrainState", "Hit", "RefreshState"]
