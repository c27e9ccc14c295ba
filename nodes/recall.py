"""Pure helpers for long-term recall: rendering ``<persistent_memory>`` text within a budget."""

from __future__ import annotations

from collections.abc import Sequence

from plait.state.events import truncate_utf8
from plait.state.ports import MemoryHit

UNDATED_KINDS = frozenset({"entity"})
LINE_MAX_BYTES = 400


def recall_line(hit: MemoryHit) -> str:
    """``- [kind] text (since date)`` on one line of at most about 400 bytes (no date: entities).

    A text that already opens with its tags (an observation's ``[decision] …``) is not tagged
    twice.
    """
    valid_at = hit.valid_at
    since = f" (since {valid_at:%Y-%m-%d})" if hit.kind not in UNDATED_KINDS and valid_at else ""
    text = truncate_utf8(" ".join(hit.text.split()), LINE_MAX_BYTES)
    return f"- [{hit.kind}] {untagged(text, hit.kind)}{since}"


def untagged(text: str, kind: str) -> str:
    """``text`` without a leading ``[kind]`` (or the kind as a plain word and a colon)."""
    for tag in (f"[{kind}]", f"{kind}:"):
        if text.lower().startswith(tag):
            return text[len(tag) :].lstrip()
    return text


def said(hit: MemoryHit) -> str:
    """What a hit says, for telling two hits of one memory apart from two memories."""
    return " ".join(untagged(" ".join(hit.text.split()), hit.kind).lower().split())[:160]


def render_recall(hits: Sequence[MemoryHit], budget_bytes: int) -> tuple[str, list[str]]:
    """One line per hit within ``budget_bytes`` (UTF-8, newlines counted); the uuids shown.

    Hits are taken in order; a line that does not fit is skipped (a shorter later one may
    still fit). Invalidated hits (``is_current`` false), repeated uuids and a second hit saying
    what an earlier one said (an observation found again as a recall turn) are left out: one
    line per remembered item.
    """
    lines: list[str] = []
    refs: list[str] = []
    seen: set[str] = set()
    used = 0
    for hit in hits:
        if not hit.is_current or hit.uuid in refs or said(hit) in seen:
            continue
        line = recall_line(hit)
        size = len(line.encode()) + (1 if lines else 0)
        if used + size > budget_bytes:
            continue
        lines.append(line)
        refs.append(hit.uuid)
        seen.add(said(hit))
        used += size
    return "\n".join(lines), refs


__all__ = ["recall_line", "render_recall"]
