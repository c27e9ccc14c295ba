"""Pure helpers for long-term recall: ranking hits and rendering ``<persistent_memory>`` text."""

from __future__ import annotations

from collections.abc import Sequence

from plait.state.background import Hit
from plait.state.events import truncate_utf8

KIND_ORDER = {"fact": 0, "preference": 0, "entity": 1, "episode": 2}
LINE_MAX_BYTES = 400


def rank_hits(hits: Sequence[Hit], *, limit: int) -> list[Hit]:
    """Best score first, facts before entities before episodes on ties; one hit per text."""
    seen: set[str] = set()
    ranked = []
    for hit in sorted(hits, key=lambda h: (-h.score, KIND_ORDER.get(h.kind, 3))):
        key = " ".join(hit.text.lower().split())
        if key and key not in seen:
            seen.add(key)
            ranked.append(hit)
    return ranked[:limit]


def render_recall(hits: Sequence[Hit], budget_bytes: int) -> tuple[str, list[str]]:
    """One line per hit (``- [kind] text``) while the budget lasts; the uuids of those shown."""
    lines: list[str] = []
    refs: list[str] = []
    used = 0
    for hit in hits:
        line = f"- [{hit.kind}] {truncate_utf8(' '.join(hit.text.split()), LINE_MAX_BYTES)}"
        size = len(line.encode()) + 1
        if used + size > budget_bytes:
            break
        lines.append(line)
        refs.append(hit.uuid)
        used += size
    return "\n".join(lines), refs


__all__ = ["rank_hits", "render_recall"]
