"""The ``<session_memory>`` envelope's marked form, and what reads it back.

Every envelope plait composes (:mod:`plait.nodes.envelope`) is marked: a comment right after its
opening tag carries a keyed digest of its text (the key is this process's), so
:func:`strip_envelopes` removes the envelopes plait injected and nothing else: a person's text
that mentions ``<session_memory`` or quotes an envelope is never cut. :func:`for_message` fits an
envelope to the message it heads (an item that only repeats the message goes);
:func:`without_mentions` takes a forgotten memory out of one. Hosts use these on what they
inject; nodes on what they compose.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from xml.sax.saxutils import escape, unescape

from plait.state.supersede import words

INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
HEAD = '<session_memory version="1">'
TAIL = "</session_memory>"
# This process's key for marking its envelopes: only an envelope whose mark verifies is stripped.
MARK_KEY = secrets.token_bytes(16)
MARK_DIGITS = 16
MARK = re.compile(rf"<!--plait:(?P<mark>[0-9a-f]{{{MARK_DIGITS}}})-->")
MARK_BYTES = len(f"<!--plait:{'0' * MARK_DIGITS}-->")
MARKED_BLOCK = re.compile(
    rf"{re.escape(HEAD)}{MARK.pattern}(?P<body>.*?){re.escape(TAIL)}[ \t]*\n?\n?", re.DOTALL
)
ITEM_LINE = re.compile(
    r"<(?P<tag>last_request|task|decision|file|rule|error)>(?P<text>[^<]*)</(?P=tag)>"
)
EMPTY_SECTION = re.compile(r"\n  <(\w+)></\1>")
# One top-level section of an envelope as plait renders it (two spaces in, on one or more lines).
SECTION_BLOCK = re.compile(r"^  <(?P<tag>\w+)>.*?</(?P=tag)>$", re.DOTALL | re.MULTILINE)
PROJECT_SECTIONS = frozenset({"project_rules", "persistent_memory"})
# What a tool step may add to what the model was told: a block of the new items only.
UPDATE_HEAD = "<memory_update>"
UPDATE_TAIL = "</memory_update>"
UPDATE_TAGS = frozenset({"decision", "rule", "error", "task"})
UPDATE_MAX_BYTES = 1024
REQUEST_CUT_BYTES = 300

# One item of a list section: ``<decision>…</decision>`` (no nested markup inside).
CHILD_ELEMENT = re.compile(r"<(task|decision|file|rule|error)>[^<]*</\1>")


def xml_text(text: str) -> str:
    """``text`` made valid XML 1.0 character data: encodable, no control characters, escaped."""
    encodable = text.encode("utf-8", errors="replace").decode("utf-8")
    return escape(INVALID_XML.sub("", encodable))


def mark_of(unmarked: str) -> str:
    """The keyed digest that marks an envelope as this process's."""
    digest = hashlib.blake2b(unmarked.encode("utf-8", "replace"), key=MARK_KEY, digest_size=8)
    return digest.hexdigest()


def marked(unmarked: str) -> str:
    """An envelope with plait's mark after its opening tag ("" stays "")."""
    if not unmarked.startswith(HEAD):
        return unmarked
    return f"{HEAD}<!--plait:{mark_of(unmarked)}-->{unmarked[len(HEAD) :]}"


def unmarked(envelope: str) -> str:
    """An envelope without its mark."""
    return MARK.sub("", envelope, count=1)


def memory_update(previous: str, current: str, max_bytes: int = UPDATE_MAX_BYTES) -> str:
    """What ``current`` says that ``previous`` did not, as a ``<memory_update>`` block, or "".

    Only what changes the work: new decisions, rules, errors and tasks (a file touched or the
    request, the model saw itself). At most ``max_bytes``; the newest sections' items first.
    """
    said = {(m["tag"], m["text"]) for m in ITEM_LINE.finditer(previous or "")}
    new = [
        f"- {m['tag']}: {m['text']}"
        for m in ITEM_LINE.finditer(current or "")
        if m["tag"] in UPDATE_TAGS and (m["tag"], m["text"]) not in said
    ]
    lines: list[str] = []
    used = len(UPDATE_HEAD) + len(UPDATE_TAIL) + 2
    for line in dict.fromkeys(new):
        if used + len(line.encode()) + 1 > max_bytes:
            break
        lines.append(line)
        used += len(line.encode()) + 1
    return "\n".join([UPDATE_HEAD, *lines, UPDATE_TAIL]) if lines else ""


def project_part(envelope: str) -> str:
    """What of a session's envelope holds for the whole project, marked, or "".

    Its rules and its long-term memory (:data:`PROJECT_SECTIONS`), not the session's own
    request, tasks, decisions, files or errors: what a new session of the project may be given
    before anything was said in it.
    """
    body = unmarked(envelope)
    if not body.startswith(HEAD):
        return ""
    kept = [m[0] for m in SECTION_BLOCK.finditer(body) if m["tag"] in PROJECT_SECTIONS]
    return marked("\n".join([HEAD, *kept, TAIL])) if kept else ""


def is_ours(match: re.Match[str]) -> bool:
    """Whether a marked block's mark verifies: plait injected it, unchanged."""
    return mark_of(f"{HEAD}{match.group('body')}{TAIL}") == match.group("mark")


def without_mentions(envelope: str, needles: Sequence[str]) -> str:
    """``envelope`` without the items that mention any of ``needles`` (a forgotten memory).

    An item is a child element (``<decision>…</decision>``) or a line of a text section
    (``<persistent_memory>``, ``<session_snapshot>``); the rest is kept as it was.
    """
    marks = [mark for needle in needles if needle for mark in {needle, xml_text(needle)}]
    if not marks:
        return envelope

    def mentions(text: str) -> bool:
        return any(mark in text for mark in marks)

    def element(match: re.Match[str]) -> str:
        return "" if mentions(match.group(0)) else match.group(0)

    kept = CHILD_ELEMENT.sub(element, envelope)
    return "\n".join(line for line in kept.split("\n") if not mentions(line))


def strip_envelopes(text: str) -> str:
    """Remove the envelopes plait injected (marked, unchanged); keep every other character.

    Text that mentions or quotes ``<session_memory`` (a question about the tag, an attached
    README) is a person's and stays whole.
    """
    if "<!--plait:" not in text:
        return text
    return MARKED_BLOCK.sub(lambda m: "" if is_ours(m) else m.group(0), text)


def says_message(item: str, message_words: list[str], *, request: bool) -> bool:
    """Whether an item only repeats the message (a request cut short repeats its start)."""
    said = words(item)
    if not said:
        return False
    if said == message_words:
        return True
    cut = request and len(item.encode()) >= REQUEST_CUT_BYTES and len(said) > 1
    return cut and message_words[: len(said) - 1] == said[:-1]


def for_message(envelope: str, message: str) -> str:
    """The envelope fit to head ``message``: items that only repeat it are left out.

    ``<last_request>`` equal to the message it heads is noise, and so is a decision or task
    that is the whole message. Returns "" when nothing else is left to say.
    """
    if not envelope or not message.strip():
        return envelope
    message_words = words(message)
    bare = unmarked(envelope)
    kept = EMPTY_SECTION.sub("", ITEM_LINE.sub(lambda m: echo_or_item(m, message_words), bare))
    if kept == bare:
        return envelope
    return "" if kept == f"{HEAD}\n{TAIL}" else marked(kept)


def echo_or_item(match: re.Match[str], message_words: list[str]) -> str:
    """An item element, or "" when it only repeats the message."""
    request = match.group("tag") == "last_request"
    if says_message(unescape(match.group("text")), message_words, request=request):
        return f"<{match.group('tag')}></{match.group('tag')}>" if request else ""
    return match.group(0)


def envelope_digest(envelope: str | None) -> str:
    """A short digest of an envelope's content (its mark left out), to tell a change."""
    text = unmarked(envelope or "")
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


__all__ = [
    "HEAD",
    "TAIL",
    "envelope_digest",
    "for_message",
    "marked",
    "memory_update",
    "project_part",
    "strip_envelopes",
    "unmarked",
    "without_mentions",
    "xml_text",
]
