"""Pure helpers that keep every MCP answer inside its byte budget."""

from __future__ import annotations

import json

from plait.state.corpus import ChunkHit, snippet, utf8_len

ANSWER_BUDGET_BYTES = 8192
FOOTER_RESERVE_BYTES = 600
HEAD_SHARE = 0.6


def cut_bytes(text: str, max_bytes: int, *, from_end: bool = False) -> str:
    """At most ``max_bytes`` of UTF-8 from the start (or the end) of ``text``, whole characters."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= max_bytes:
        return text
    if max_bytes <= 0:
        return ""
    piece = data[-max_bytes:] if from_end else data[:max_bytes]
    return piece.decode("utf-8", errors="ignore")


def fits(text: str, budget: int = ANSWER_BUDGET_BYTES) -> bool:
    """Whether ``text`` is within ``budget`` bytes of UTF-8."""
    return utf8_len(text) <= budget


def excerpt(text: str, budget: int) -> str:
    """A head and tail of ``text`` with an omission marker, within ``budget`` bytes."""
    if fits(text, budget):
        return text
    total = utf8_len(text)
    room = max(0, budget - 64)
    head = cut_bytes(text, int(room * HEAD_SHARE))
    tail = cut_bytes(text, room - utf8_len(head), from_end=True)
    omitted = total - utf8_len(head) - utf8_len(tail)
    return f"{head}\n… [{omitted} bytes omitted] …\n{tail}"


def overflow_answer(header: str, text: str, reference: str, budget: int) -> str:
    """``header``, an excerpt of ``text`` and where the full text went, within ``budget``."""
    footer = (
        f"\n[output {utf8_len(text)} bytes; full text indexed as {reference} — "
        "use session_search to find the part you need]"
    )
    room = budget - utf8_len(header) - utf8_len(footer) - 2
    return cut_bytes(f"{header}\n{excerpt(text, room)}{footer}", budget)


def render_hits(query: str, hits: list[ChunkHit], budget: int = ANSWER_BUDGET_BYTES) -> str:
    """Search hits as text: reference, title and the passage around the match, within budget."""
    if not hits:
        return f"no results for {query!r} in this session's corpus"
    share = max(200, (budget - 200) // len(hits) - 120)
    words = query.lower().split()
    lines = [f"{len(hits)} result(s) for {query!r}:"]
    for number, hit in enumerate(hits, start=1):
        title = f" — {hit.title}" if hit.title else ""
        passage = cut_bytes(snippet(hit.text, words, share), share)
        lines.append(f"\n{number}. {hit.reference}{title}\n{passage}")
    return cut_bytes("\n".join(lines), budget)


def pretty_json(text: str) -> str | None:
    """``text`` re-serialised with indentation, or None if it is not JSON."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=False)
    except ValueError:
        return None


__all__ = [
    "ANSWER_BUDGET_BYTES",
    "cut_bytes",
    "excerpt",
    "fits",
    "overflow_answer",
    "pretty_json",
    "render_hits",
]
