"""Rule-based promotion of user text into decisions, rules, preferences and tasks (no LLM)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from plait.state.events import EventKind

APPROVAL = re.compile(
    r"^(?:yes|yep|yeah|ok(?:ay)?|sure|fine|good|great|perfect|thanks?(?: you)?|lgtm|"
    r"sounds good|looks (?:good|fine|great)|go ahead|do it|proceed|continue|right|correct)"
    r"(?:[\s,.!]+(?:yes|ok|sure|go ahead|do it|please|thanks|fine|good))*[\s,.!]*$",
    re.IGNORECASE,
)
QUESTION = re.compile(
    r"^\s*(?:how|what|why|where|when|which|who|can|could|should we|do we)\b.*\?", re.I | re.S
)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
RULE = re.compile(
    r"^\s*(?:rule|constraint)\s*:|\b(?:never|always)\s+(?!mind\b)[a-z]+|\b(?:must(?: not)?|"
    r"mustn't|should(?: not)?|shouldn't|do not ever|don't ever)\b",
    re.IGNORECASE,
)
PREFERENCE = re.compile(r"\b(?:i|we) (?:prefer|like|'d rather|would rather)\b|^\s*prefer\b", re.I)
DECISION = re.compile(
    r"^\s*decision\s*:|\b(?:we(?:'ve)? decided|decided to|let's use|let's go with|"
    r"we(?:'ll| will) use|"
    r"go with|switch to|instead)\b|^\s*(?:actually,?\s*)?use\s",
    re.IGNORECASE,
)
TASK = re.compile(
    r"^\s*(?:todo|task)\s*:|\b(?:remember to|don't forget to|do not forget to)\b", re.I
)
NEGATION = re.compile(
    r"\b(?:don't|do not|no longer|stop) (?:use|using) (?:the )?(?P<a>[\w.+-]+)|"
    r"\binstead of (?:the )?(?P<b>[\w.+-]+)|\bnot (?P<c>[\w.+-]+) anymore",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Promotion:
    """One event promoted from user text."""

    kind: EventKind
    text: str
    negated: tuple[str, ...] = ()


def is_approval(text: str) -> bool:
    """A short go-ahead ("yes, do it") that is not a request of its own."""
    return bool(APPROVAL.match(text.strip())) and len(text.split()) <= 8


def is_question(text: str) -> bool:
    """Questions ask; they decide nothing."""
    return text.rstrip().endswith("?") or bool(QUESTION.match(text))


def negated_terms(text: str) -> tuple[str, ...]:
    """Words the text turns away from: "don't use SQLite" → ("sqlite",)."""
    terms = []
    for match in NEGATION.finditer(text):
        word = match.group("a") or match.group("b") or match.group("c")
        terms.append(word.lower().strip(".,"))
    return tuple(dict.fromkeys(terms))


def affirmative_part(text: str) -> str:
    """The sentences of a reversal that say what to do now, without the rejected choice."""
    negated = negated_terms(text)
    kept = [
        sentence
        for sentence in SENTENCE.split(text.strip())
        if not any(term in sentence.lower() for term in negated)
    ]
    return " ".join(kept) if kept else text


def promote(text: str) -> list[Promotion]:
    """Decisions, rules, preferences and tasks stated in one user message."""
    stripped = text.strip()
    if not stripped or is_approval(stripped) or is_question(stripped):
        return []
    promotions: list[Promotion] = []
    if DECISION.search(stripped):
        negated = negated_terms(stripped)
        summary = affirmative_part(stripped) if negated else stripped
        promotions.append(Promotion(kind=EventKind.DECISION, text=summary, negated=negated))
    elif PREFERENCE.search(stripped):
        promotions.append(Promotion(kind=EventKind.PREFERENCE, text=stripped))
    elif RULE.search(stripped):
        promotions.append(Promotion(kind=EventKind.RULE, text=stripped))
    if TASK.search(stripped):
        promotions.append(Promotion(kind=EventKind.TASK_CREATE, text=stripped))
    return promotions


def topic_key(text: str) -> str:
    """A stable key for a piece of text: its lower-cased words."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))[:120]


__all__ = ["Promotion", "affirmative_part", "is_approval", "negated_terms", "promote", "topic_key"]
