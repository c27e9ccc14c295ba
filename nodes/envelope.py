"""The ``<session_memory>`` envelope: rendered from a snapshot, escaped, within its budgets.

Items are admitted in priority order (P0 first, the user's before the model's, newest first
within a tier) while the snapshot budget lasts, then rendered in the fixed section order of
DESIGN.md; whatever does not fit is the lowest tier, oldest first. Each text appears once: an
item already said by a higher tier (or the last request said by a decision) is not repeated.
Files in play list the changed files before the read ones, and at most ``READ_FILES_MAX`` read
ones. When the whole envelope is still over its budget, the lowest tiers go first, then the
persistent memory, then the request is shortened. All text is XML-escaped, so nothing a user
writes can close the envelope.

Every envelope plait composes is marked (:func:`plait.state.envelope.marked`), so the envelopes
plait injected, and nothing else, can be found and stripped again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from plait.state.envelope import (
    HEAD,
    MARK_BYTES,
    TAIL,
    envelope_digest,
    for_message,
    marked,
    strip_envelopes,
    without_mentions,
    xml_text,
)
from plait.state.events import truncate_utf8
from plait.state.snapshot import Item, Snapshot, is_read_only

READ_FILES_MAX = 3
ITEM_MAX_BYTES = 400
PERSISTENT_BUDGET_BYTES = 2000
SHORT_REQUEST_BYTES = 120


@dataclass(frozen=True, kw_only=True, slots=True)
class Section:
    """Where a snapshot section goes in the envelope and how important it is.

    Attributes:
        source: The ``Snapshot`` field it is read from.
        tier: 0 is kept longest; the highest tier is dropped first.
        tag: The envelope element it renders into.
        child: The element of each item ("" for lines of ``session_snapshot``).
        label: The prefix of a ``session_snapshot`` line.
    """

    source: str
    tier: int
    tag: str
    child: str
    label: str = ""


# The one table of sections: the order here is the render order; ``tier`` decides what is
# dropped first. ``last_assistant`` (only the source of a compaction summary) and ``edits``
# (already in files in play) are deliberately not rendered.
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


clean = xml_text  # the older name


def fit_bytes(text: str, max_bytes: int) -> str:
    """``text`` escaped, cut so the escaped form has at most ``max_bytes`` (never mid-entity)."""
    cut = truncate_utf8(text, max_bytes)
    while len(xml_text(cut).encode()) > max_bytes and cut:
        cut = truncate_utf8(cut, len(cut.encode("utf-8", "replace")) * 3 // 4)
    return xml_text(cut)


@dataclass(frozen=True, slots=True)
class Entry:
    """One candidate line of the envelope (``assistant``: the model said it, it ranks lower)."""

    section: Section
    text: str
    order: int
    assistant: bool = False

    def rank(self) -> tuple[int, bool, int]:
        """Admission order: tier, the user's before the model's, newest first."""
        return (self.section.tier, self.assistant, self.order)


def normalized(text: str) -> str:
    """The form two texts are compared in to say an item once."""
    return " ".join(text.lower().split()).rstrip(".!")


def section_items(snapshot: Snapshot, section: Section) -> list[Item]:
    """A section's non-empty items, newest first (a text field is one item)."""
    value = getattr(snapshot, section.source)
    items = [Item(key="", text=value)] if isinstance(value, str) else list(reversed(value))
    items = [item for item in items if item.text]
    if section.source == "files":
        changed = [item for item in items if not is_read_only(item)]
        return changed + [item for item in items if is_read_only(item)][:READ_FILES_MAX]
    return items


def candidates(snapshot: Snapshot) -> list[Entry]:
    """Every item as an envelope entry, each text once (kept by its highest tier)."""
    seen: set[str] = set()
    entries: list[Entry] = []
    for section in sorted(SECTIONS, key=lambda s: s.tier):
        for order, item in enumerate(section_items(snapshot, section)):
            said = normalized(item.text)
            if said in seen:
                continue
            seen.add(said)
            line = f"{section.label}: {item.text}" if section.label else item.text
            text = truncate_utf8(line, ITEM_MAX_BYTES)
            entries.append(Entry(section, text, order, item.by_assistant))
    return entries


def entry_cost(entry: Entry) -> int:
    """Bytes an entry adds to the envelope (its escaped text and its element tags)."""
    return len(xml_text(entry.text).encode()) + len(entry.section.child) * 2 + 6


def admit(entries: Sequence[Entry], budget_bytes: int) -> list[Entry]:
    """The entries that fit, taken by tier, the user's first, then recency."""
    admitted: list[Entry] = []
    used = 0
    for entry in sorted(entries, key=Entry.rank):
        size = entry_cost(entry)
        if used + size <= budget_bytes:
            admitted.append(entry)
            used += size
    return admitted


def render_sections(admitted: Sequence[Entry]) -> list[str]:
    """XML for the admitted entries, sections in their fixed order."""
    by_tag: dict[str, list[Entry]] = {}
    for entry in admitted:
        by_tag.setdefault(entry.section.tag, []).append(entry)
    lines: list[str] = []
    for tag, child in dict.fromkeys((s.tag, s.child) for s in SECTIONS):
        if tag not in by_tag:
            continue
        ordered = sorted(by_tag.pop(tag), key=lambda e: (SECTIONS.index(e.section), *e.rank()))
        if child:
            inner = "".join(f"<{child}>{xml_text(e.text)}</{child}>" for e in ordered)
            lines.append(f"  <{tag}>{inner}</{tag}>")
        else:
            body = "\n".join(xml_text(e.text) for e in ordered)
            lines.append(f"  <{tag}>\n{body}\n  </{tag}>")
    return lines


def request_text(snapshot: Snapshot, entries: Sequence[Entry]) -> str:
    """The last request, unless a decision, rule or task already says it."""
    request = truncate_utf8(snapshot.last_request, ITEM_MAX_BYTES)
    said = normalized(request)
    return "" if any(normalized(entry.text) == said for entry in entries) else request


def request_line(request: str, max_bytes: int = ITEM_MAX_BYTES * 6) -> str:
    """The ``<last_request>`` element, or "" when there is no request."""
    return f"  <last_request>{fit_bytes(request, max_bytes)}</last_request>" if request else ""


def persistent_block(persistent: str | None, budget_bytes: int) -> str:
    """The ``<persistent_memory>`` element within its own budget, or "".

    It carries no graph uuids: they cost bytes in every prompt and tell the model nothing.
    """
    if not persistent or not persistent.strip() or budget_bytes <= 0:
        return ""
    head = "  <persistent_memory>\n"
    tail = "\n  </persistent_memory>"
    room = budget_bytes - len(head.encode()) - len(tail)
    return f"{head}{fit_bytes(persistent.strip(), room)}{tail}" if room > 0 else ""


RECALL_LINE = re.compile(r"^- \[[a-z_]+\] (?P<text>.*?)(?: \(since \d{4}-\d{2}-\d{2}\))?$")


def unsaid(persistent: str | None, entries: Sequence[Entry]) -> str | None:
    """The recall lines whose text the session's own items do not already say (once is enough)."""
    if not persistent:
        return persistent
    said = {normalized(entry.text) for entry in entries}
    kept = []
    for line in persistent.splitlines():
        match = RECALL_LINE.match(line.strip())
        if match is None or normalized(match["text"]) not in said:
            kept.append(line)
    return "\n".join(kept)


def assemble(lines: Sequence[str]) -> str:
    """The envelope around its section lines ("" when there are none)."""
    body = [line for line in lines if line]
    return "\n".join([HEAD, *body, TAIL]) if body else ""


def attempts(request: str, memory: str) -> Iterator[tuple[str, str]]:
    """(request line, memory block) pairs, richest first, for when the budget is tight."""
    yield request_line(request), memory
    if memory:
        yield request_line(request), ""
    if request:
        yield request_line(request, SHORT_REQUEST_BYTES), ""


def fit(top: str, entries: Sequence[Entry], memory: str, budget: int, allowance: int) -> str:
    """The richest envelope of ``top``, admitted entries and ``memory`` within ``budget``."""
    fixed = len(assemble([top or " ", memory]).encode())
    allowance = max(0, min(allowance, budget - fixed))
    while True:
        envelope = assemble([top, *render_sections(admit(entries, allowance)), memory])
        if len(envelope.encode()) <= budget:
            return envelope
        if allowance <= 0:
            return ""
        allowance = max(0, allowance - max(32, allowance // 8))


def compose_envelope(
    snapshot: Snapshot,
    *,
    persistent: str | None = None,
    budget_bytes: int,
    snapshot_budget_bytes: int,
    persistent_budget_bytes: int = PERSISTENT_BUDGET_BYTES,
) -> str:
    """The envelope, or "" when there is nothing to say. Never over ``budget_bytes``.

    Args:
        snapshot: The session's snapshot.
        persistent: Cached long-term facts (the cache is its only source), optional.
        budget_bytes: Hard cap on the whole envelope (UTF-8 bytes).
        snapshot_budget_bytes: Cap on the snapshot items (everything but the request and
            the persistent memory).
        persistent_budget_bytes: Cap on the ``<persistent_memory>`` element.

    Returns:
        Well-formed XML within ``budget_bytes``, marked as plait's, or "".
    """
    entries = candidates(snapshot)
    request = request_text(snapshot, entries)
    memory = persistent_block(unsaid(persistent, entries), persistent_budget_bytes)
    room = budget_bytes - MARK_BYTES
    for top, block in attempts(request, memory):
        envelope = fit(top, entries, block, room, snapshot_budget_bytes)
        if envelope:
            return marked(envelope)
    return ""


__all__ = [
    "without_mentions",
    "ITEM_MAX_BYTES",
    "PERSISTENT_BUDGET_BYTES",
    "SECTIONS",
    "Section",
    "compose_envelope",
    "envelope_digest",
    "for_message",
    "marked",
    "strip_envelopes",
    "xml_text",
]
