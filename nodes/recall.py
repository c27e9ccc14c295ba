"""Pure helpers for long-term recall: rendering ``<persistent_memory>`` text within a budget."""

from __future__ import annotations

from collections.abc import Sequence

from plait.state.events import truncate_utf8
from plait.state.ports import MemoryHit

UNDATED_KINDS = frozenset({"entity"})
LINE_MAX_BYTES = 400


def recall_line(hit: MemoryHit) -> str:
    """``- [kind] text (since date)`` on one line of at most about 400 bytes (no date: entities)."""
    valid_at = hit.valid_at
    since = f" (since {valid_at:%Y-%m-%d})" if hit.kind not in UNDATED_KINDS and valid_at else ""
    text = truncate_utf8(" ".join(hit.text.split()), LINE_MAX_BYTES)
    return f"- [{hit.kind}] {text}{since}"


def render_recall(hits: Sequence[MemoryHit], budget_bytes: int) -> tuple[str, list[str]]:
    """One line per hit within ``budget_bytes`` (UTF-8, newlines counted); the uuids shown.

    Hits are taken in order; a line that does not fit is skipped (a shorter later one may
    still fit). Invalidated hits (``is_current`` false) and repeated uuids are left out.
    """
    lines: list[str] = []
    refs: list[str] = []
    used = 0
    for hit in hits:
        if not hit.is_current or hit.uuid in refs:
            continue
        line = recall_line(hit)
        size = len(line.encode()) + (1 if lines else 0)
        if used + size > budget_bytes:
            continue
        lines.append(line)
        refs.append(hit.uuid)
        used += size
    return "\n".join(lines), refs


__all__ = ["recall_line", "render_recall"]
