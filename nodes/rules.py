"""The keys promoted statements are kept under in the snapshot (pure, no LLM).

What a message states is the capture engine's to say (:mod:`plait.nodes.statements`); this
module only names the identity each kind of statement is folded under: a decision by its
subject, a rule or preference by its words without their polarity (so "never use tabs"
replaces "always use tabs"), a task and its completion by their words.
"""

from __future__ import annotations

import re

POLARITY_WORDS = frozenset(
    {"always", "never", "must", "mustn", "not", "don", "t", "do", "dont", "should", "shouldn"}
    | {"rule", "constraint", "convention", "policy", "from", "now", "on", "going", "forward"}
    | {"please", "ever", "i", "we", "prefer", "like", "to", "rather", "would", "d", "want", "you"}
    | {"the", "a", "an", "in", "of", "for", "our", "all", "any", "with"}
)
KEY_MAX = 120


def topic_key(text: str) -> str:
    """A stable key for a piece of text: its lower-cased words."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))[:KEY_MAX]


def decision_key(subject: str, text: str) -> str:
    """A decision's key: ``topic:<subject>`` ("topic:rate limiting"), else its own words."""
    words = topic_key(subject)
    return f"topic:{words}" if words else f"topic:{topic_key(text)}"


def rule_topic(text: str) -> str:
    """What a rule is about, without its polarity or word order.

    "Always use tabs" and "never use tabs" share ``rule:tabs use``, so the later one
    supersedes the earlier.
    """
    words = sorted({w for w in topic_key(text).split() if w not in POLARITY_WORDS})
    return "rule:" + " ".join(words)[: KEY_MAX - 10] if words else topic_key(text)


def task_key(text: str) -> str:
    """A task stated in text: ``task:<words>``."""
    return f"task:{topic_key(text)}"


def done_key(text: str) -> str:
    """A completion stated in text (the snapshot matches it to the open task it names)."""
    return f"done:{topic_key(text)}"


__all__ = ["decision_key", "done_key", "rule_topic", "task_key", "topic_key"]
