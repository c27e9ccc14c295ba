"""Knowledge, not chatter: what becomes long-term knowledge and what ``<persistent_memory>`` shows.

Pure helpers. Every event stays searchable in the recall index (a question may need a raw
prompt); this module decides what else happens to it:

- :func:`is_lasting` — whether an event goes into the knowledge graph (and costs an LLM's
  extraction there). Prompts do not: capture already made their decisions, rules, preferences
  and tasks events of their own (:mod:`plait.nodes.statements`), so a prompt adds only its
  wording. Acknowledgements and assistant chatter, reads and searches, task progress states,
  subagent starts, branch switches and transient tool or environment failures ("glob: ripgrep
  execution failed", a timeout) are not knowledge either.
- :func:`select_hits` — the hits ``<persistent_memory>`` shows: current, lasting kinds only,
  each fact once (a decision found as a fact, as its turn and in an entity summary is one line),
  no internal keys.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from plait.state.events import EventKind, SessionEvent
from plait.state.observations import OBSERVATION_TYPES
from plait.state.ports import MemoryHit

NOT_KNOWLEDGE = frozenset(
    {
        EventKind.PROMPT,
        EventKind.MESSAGE,
        EventKind.TOOL_RESULT,
        EventKind.INTENT,
        EventKind.FILE_READ,
        EventKind.FILE_SEARCH,
        EventKind.FILE_WRITE,
        EventKind.FILE_EDIT,
        EventKind.CWD_CHANGE,
        EventKind.TASK_CREATE,
        EventKind.TASK_UPDATE,
        EventKind.SUBAGENT_START,
    }
)
TRANSIENT = re.compile(
    r"execution failed|timed? ?out|timeout|connection (?:refused|reset|closed|aborted)|"
    r"econn(?:refused|reset)|etimedout|enotfound|eai_again|network (?:is )?unreachable|"
    r"temporar(?:y|ily) (?:failure|unavailable)|service unavailable|too many requests|"
    r"rate.?limit|\b(?:429|502|503|504)\b|interrupted|killed|cancell?ed|aborted|"
    r"no space left|out of memory|resource busy|try again",
    re.IGNORECASE,
)
# Hit kinds ``<persistent_memory>`` shows: graph facts and entities, turns of these kinds, and
# every saved observation (someone chose to keep it: the project brief, a bugfix, a pattern).
SHOWN_KINDS = frozenset(
    {
        *OBSERVATION_TYPES,
        "fact",
        "preference",
        "entity",
        EventKind.DECISION.value,
        EventKind.RULE.value,
        EventKind.DISCOVERY.value,
        EventKind.ERROR_RESOLVED.value,
        EventKind.TASK_COMPLETE.value,
        EventKind.SUBAGENT_FINISH.value,
        EventKind.ENV_CHANGE.value,
    }
)
STALE_FACT = re.compile(r"^(?:Task(?: update)?: |Git: branch )", re.IGNORECASE)
FACT_LABEL = re.compile(
    r"^(?:Decided|Rule|The user prefers|Learned|Completed task|Environment|Git|Error|"
    r"Fix for [^:]{0,120}): ",
    re.IGNORECASE,
)
TOPIC_SUFFIX = re.compile(r"\s*\(topic: [^)]*\)\s*$")
KIND_LABEL = re.compile(r"^(?:rule|decision|preference|constraint|finding|note):\s+", re.IGNORECASE)
# "pytest succeeded": the command passed again, but what fixed it is not said.
BARE_SUCCESS = re.compile(r"^\S+ succeeded$")


def is_transient_failure(text: str) -> bool:
    """Whether an error reads as a passing tool or environment failure, not a finding."""
    return bool(TRANSIENT.search(text))


def is_lasting(event: SessionEvent) -> bool:
    """Whether an event is knowledge worth the knowledge graph (see the module)."""
    if event.kind in NOT_KNOWLEDGE:
        return False
    if event.kind is EventKind.ERROR:
        return not is_transient_failure(f"{event.summary}\n{event.body[:500]}")
    if event.kind is EventKind.GIT:
        return not event.summary.startswith("branch ")
    if event.kind is EventKind.ERROR_RESOLVED:
        return not BARE_SUCCESS.match(event.summary)
    return True


def display_text(hit: MemoryHit) -> str:
    """A hit's text without internal markers (a fact's ``(topic: …)`` key)."""
    if hit.kind == "entity":
        name, sep, summary = hit.text.partition(": ")
        lines = [TOPIC_SUFFIX.sub("", line) for line in summary.split("\n")]
        return f"{name}{sep}{' '.join(lines)}" if sep else name
    return KIND_LABEL.sub("", TOPIC_SUFFIX.sub("", hit.text))


def core(text: str) -> str:
    """The words a piece of knowledge says, to find the same thing said twice."""
    bare = FACT_LABEL.sub("", TOPIC_SUFFIX.sub("", text.strip()))
    return " ".join(re.findall(r"\w+", bare.lower()))


REPEAT_MIN_WORDS = 3


def repeats(first: str, second: str) -> bool:
    """Whether two cores say the same: equal, or one holds the other (of 3 words or more)."""
    if first == second:
        return True
    shorter, longer = sorted((first, second), key=len)
    return len(shorter.split()) >= REPEAT_MIN_WORDS and f" {shorter} " in f" {longer} "


def says_again(candidate: str, said: Sequence[str]) -> bool:
    """Whether ``candidate`` (a core) repeats, or is repeated by, something said already."""
    return not candidate or any(repeats(candidate, other) for other in said)


def entity_cores(hit: MemoryHit) -> list[str]:
    """The cores of an entity summary's sentences."""
    _, _, summary = hit.text.partition(": ")
    pieces = re.split(r"(?<=[.!?])\s+|\n", summary)
    return [c for c in (core(piece) for piece in pieces) if c]


def shown(hit: MemoryHit) -> bool:
    """Whether a hit may appear in ``<persistent_memory>`` at all."""
    if not hit.is_current or hit.kind not in SHOWN_KINDS:
        return False
    if hit.kind == "fact":
        return not STALE_FACT.match(hit.text) and not (
            hit.text.startswith("Error: ") and is_transient_failure(hit.text)
        )
    if hit.kind == EventKind.ERROR_RESOLVED.value:
        return not BARE_SUCCESS.match(hit.text)
    return True


def select_hits(hits: Sequence[MemoryHit], limit: int) -> list[MemoryHit]:
    """The hits to show, in order: lasting, current, each piece of knowledge once."""
    said: list[str] = []
    chosen: list[MemoryHit] = []
    for hit in hits:
        if len(chosen) >= limit or not shown(hit):
            continue
        if hit.kind == "entity":
            pieces = entity_cores(hit)
            if not pieces or all(says_again(piece, said) for piece in pieces):
                continue
            said.extend(pieces)
        else:
            text = core(hit.text)
            if says_again(text, said):
                continue
            said.append(text)
        chosen.append(hit.model_copy(update={"text": display_text(hit)}))
    return chosen


__all__ = [
    "NOT_KNOWLEDGE",
    "SHOWN_KINDS",
    "core",
    "display_text",
    "is_lasting",
    "is_transient_failure",
    "select_hits",
]
