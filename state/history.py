"""Past sessions read from a host's own records, as plait's intents (``plait import-history``).

A host's reader yields :class:`PastCall` s in the order they happened; each carries a call id
derived from the host's own id of the record, so importing twice records nothing twice (the hot
store appends nothing for a call id it has seen). A record a reader cannot use is a
:class:`Skipped`, named by where it was, and the import goes on past it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from plait.state.intents import Intent


@dataclass(frozen=True, kw_only=True, slots=True)
class PastCall:
    """What one record of a past session said, for plait to record as if it happened now."""

    session_id: str
    parent_id: str | None
    call_id: str
    intents: tuple[Intent, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Skipped:
    """A record that could not be read: where it is, and why."""

    where: str
    reason: str


class HistoryReader(Protocol):
    """A host's past sessions of one project."""

    host: str

    def sessions(self) -> list[str]:
        """The ids of the project's past sessions, oldest first."""
        ...

    def calls(self) -> Iterator[PastCall | Skipped]:
        """Every record of those sessions, in the order they happened."""
        ...


__all__ = ["HistoryReader", "PastCall", "Skipped"]
