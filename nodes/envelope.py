"""The ``<session_memory>`` envelope: rendered from a snapshot, escaped, within its budgets.

Items are admitted in priority order (P0 first, newest first within a tier) while the snapshot
budget lasts, then rendered in the fixed section order of DESIGN.md; whatever does not fit is
the lowest tier, oldest first. Each item appears in one section only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from plait.state.events import truncate_utf8
from plait.state.snapshot import Snapshot

ENVELOPE_BLOCK = re.compile(r"<session_memory\b.*?(?:</session_memory>|\Z)\s*", re.DOTALL)
INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
ITEM_MAX_BYTES = 400


@dataclass(frozen=True, kw_only=True, slots=True)
class Section:
    """Where a snapshot section goes in the envelope and how important it is."""

    source: str
    tier: int
    tag: str
    child: str
    label: str = ""


# The order here is the render order; ``tier`` decides what is dropped first.
SECTIONS: tuple[Section, ...] = (
    Section(source="tasks", tier=1, tag="active_tasks", child="task"),
    Section(source="decisions", tier=0, tag="key_decisions", child="decision"),
    Section(source="files", tier=2, tag="files_in_play", child="file"),
    Section(source="rules", tier=0, tag="project_rules", child="rule"),
    Section(source="errors", tier=1, tag="unresolved_errors", child="error"),
    Section(source="compaction_summary", tier=1, tag="session_snapshot", child="", label="summary"),
    Section(source="intent", tier=2, tag="session_snapshot", child="", label="intent"),
    Section(
        source="subagents_open", tier=2, tag="session_snapshot", child="", label="subagent running"
    ),
    Section(source="environment", tier=3, tag="session_snapshot", child="", label="environment"),
    Section(source="git", tier=3, tag="session_snapshot", child="", label="git"),
    Section(
        source="subagents_done", tier=3, tag="session_snapshot", child="", label="subagent done"
    ),
    Section(source="discoveries", tier=4, tag="session_snapshot", child="", label="found"),
)


def clean(text: str) -> str:
    """Escaped, single-line-safe text valid in XML 1.0."""
    return escape(INVALID_XML.sub("", text))


def strip_envelopes(text: str) -> str:
    """Remove ``<session_memory>`` blocks (an unclosed one runs to the end)."""
    return ENVELOPE_BLOCK.sub("", text)


@dataclass(frozen=True, slots=True)
class Entry:
    """One candidate line of the envelope."""

    section: Section
    text: str
    order: int


def candidates(snapshot: Snapshot) -> list[Entry]:
    """Every item of the snapshot as an envelope entry, newest first within each section."""
    entries: list[Entry] = []
    for section in SECTIONS:
        value = getattr(snapshot, section.source)
        items = [value] if isinstance(value, str) else [i.text for i in reversed(value)]
        for order, text in enumerate(t for t in items if t):
            line = f"{section.label}: {text}" if section.label else text
            entries.append(Entry(section, truncate_utf8(line, ITEM_MAX_BYTES), order))
    return entries


def admit(entries: list[Entry], budget_bytes: int) -> list[Entry]:
    """The entries that fit, taken by tier then recency."""
    admitted: list[Entry] = []
    used = 0
    for entry in sorted(entries, key=lambda e: (e.section.tier, e.order)):
        size = len(clean(entry.text).encode()) + len(entry.section.child) * 2 + 6
        if used + size <= budget_bytes:
            admitted.append(entry)
            used += size
    return admitted


def render_sections(admitted: list[Entry]) -> list[str]:
    """XML for the admitted entries, sections in their fixed order."""
    lines: list[str] = []
    by_tag: dict[str, list[Entry]] = {}
    for entry in admitted:
        by_tag.setdefault(entry.section.tag, []).append(entry)
    rendered_tags: set[str] = set()
    for section in SECTIONS:
        tag = section.tag
        if tag in rendered_tags or tag not in by_tag:
            continue
        rendered_tags.add(tag)
        ordered = sorted(by_tag[tag], key=lambda e: (SECTIONS.index(e.section), e.order))
        if tag == "session_snapshot":
            body = "\n".join(clean(e.text) for e in ordered)
            lines.append(f"  <session_snapshot>\n{body}\n  </session_snapshot>")
        else:
            child = section.child
            inner = "".join(f"<{child}>{clean(e.text)}</{child}>" for e in ordered)
            lines.append(f"  <{tag}>{inner}</{tag}>")
    return lines


def compose_envelope(
    snapshot: Snapshot,
    *,
    persistent: str | None = None,
    node_refs: tuple[str, ...] = (),
    budget_bytes: int,
    snapshot_budget_bytes: int,
) -> str:
    """The envelope, or "" when there is nothing to say. Never over ``budget_bytes``."""
    head = '<session_memory version="1">'
    tail = "</session_memory>"
    request = truncate_utf8(snapshot.last_request, ITEM_MAX_BYTES)
    entries = candidates(snapshot)
    if any(entry.text == request for entry in entries):
        request = ""  # the request is already a decision, rule or task: said once
    top = [f"  <last_request>{clean(request)}</last_request>"] if request else []
    memory = ""
    if persistent:
        refs = quoteattr(" ".join(node_refs))
        memory = (
            f"  <persistent_memory node_refs={refs}>\n{clean(persistent)}\n  </persistent_memory>"
        )
    fixed = len(head) + len(tail) + sum(len(line.encode()) + 1 for line in top) + 2
    room = budget_bytes - fixed - (len(memory.encode()) + 1 if memory else 0)
    if room < 0 and memory:
        memory, room = "", budget_bytes - fixed
    allowance = min(snapshot_budget_bytes, room)
    while True:
        body = top + render_sections(admit(entries, allowance)) + ([memory] if memory else [])
        envelope = "\n".join([head, *body, tail]) if body else ""
        if len(envelope.encode()) <= budget_bytes or allowance <= 0:
            return envelope if len(envelope.encode()) <= budget_bytes else ""
        allowance -= max(64, allowance // 10)


__all__ = ["SECTIONS", "compose_envelope", "strip_envelopes"]
