"""Rule-based promotion of user text into decisions, rules, preferences and tasks (no LLM).

Every function here is pure. The patterns are deliberately conservative: a missed promotion only
leaves the text in ``last_request``, while a false one pins chatter into every envelope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plait.state.events import EventKind

# Words that, alone or chained ("ok, go ahead, thanks"), say "yes" and ask for nothing new.
APPROVAL_WORD = (
    r"(?:yes|yep|yeah|yup|ok(?:ay)?|k|sure|fine|good|great|perfect|nice|cool|thanks?(?: you)?|"
    r"ty|lgtm|ship it|sounds (?:good|great|fine|right)|looks (?:good|fine|great|right)|"
    r"go (?:ahead|for it|on)|do (?:it|that|so)|please do(?: that| it)?|proceed|continue|"
    r"carry on|keep going|right|correct|exactly|agreed|approved?|that works|works for me|"
    r"please|y)"
)
APPROVAL = re.compile(rf"^\W*{APPROVAL_WORD}(?:[\s,.!;:-]+{APPROVAL_WORD})*[\s,.!;:)]*$", re.I)
QUESTION = re.compile(
    r"^\s*(?:how|what|why|where|when|which|who|whose)\b(?!\s+(?:we|i)\s+(?:decided|agreed)\b)",
    re.IGNORECASE,
)
SENTENCE = re.compile(r"(?<=[.!?;])\s+")
RULE = re.compile(
    r"^\s*(?:rule|constraint|convention|policy)\s*:|"
    r"\b(?:always|never)\s+(?!mind\b)[a-z]+|"
    r"\b(?:must(?: not| never| always)?|mustn't|do not ever|don't ever)\b|"
    r"\b(?:should|shall) (?:always|never)\b|\b(?:from now on|going forward)\b",
    re.IGNORECASE,
)
PREFERENCE = re.compile(
    r"\b(?:i|we) (?:prefer|like to|'d rather|would rather|want you to)\b|^\s*prefer\b", re.I
)
DECISION = re.compile(
    r"^\s*decision\s*:|\b(?:we(?:'ve| have)? decided|decided to|let's use|let's go with|"
    r"let's stick with|we(?:'ll| will) use|we(?:'ll| will) go with|go with|switch to|"
    r"switch (?:the |our )?[\w-]+ (?:to|over to)|"
    r"stick with|instead)\b|^\s*(?:actually,?\s*|no,?\s*)?use\s",
    re.IGNORECASE,
)
TASK = re.compile(
    r"^\s*(?:todo|task|next)\s*:|\b(?:remember to|don't forget to|do not forget to)\b", re.I
)
# "done: X", "X is done", "finished the X", "we've completed X": a stated task completion.
DONE = re.compile(
    r"^\s*(?:done|finished|completed|closed)\s*:|"
    r"\b(?:is|are|'s) (?:now |all )?(?:done|finished|complete|completed)\b|"
    r"^\s*(?:(?:i|we)(?:'ve| have)? )?(?:finished|completed)\b",
    re.I,
)
NEGATION = re.compile(
    r"\b(?:don't|do not|no longer|stop) (?:use|using) (?:the )?(?P<a>[\w.+-]+)|"
    r"\binstead of (?:the |using )?(?P<b>[\w.+-]+)|\bnot (?P<c>[\w.+-]+) anymore|"
    r"\b(?:drop|replace|ditch) (?:the )?(?P<d>[\w.+-]+)\b(?= (?:with|for|by)\b)",
    re.IGNORECASE,
)
# "use X for the cache" / "X as the queue" / "cache: X" / "switch the cache to X" name the topic.
TOPIC = re.compile(
    r"\b(?:for|as) (?:the |our |a |an )?(?P<a>[a-z][\w-]*(?: [a-z][\w-]*)?)\s*[.!;,]?\s*$|"
    r"\b(?:for|as) (?:the |our |a |an )?(?P<e>[a-z][\w-]*)\b|"
    r"^\s*(?:decision\s*:\s*)?(?P<b>[a-z][\w -]{1,30}?)\s*:\s|"
    r"\bswitch (?:the |our )?(?P<c>[a-z][\w-]*) (?:to|from)\b",
    re.IGNORECASE,
)
TOPIC_STOPWORDS = frozenset(
    {"now", "example", "instance", "me", "you", "us", "it", "this", "that", "is", "well"}
    | {"while", "good", "later", "all"}
)


POLARITY_WORDS = frozenset(
    {"always", "never", "must", "mustn", "not", "don", "t", "do", "dont", "should", "shouldn"}
    | {"rule", "constraint", "convention", "policy", "from", "now", "on", "going", "forward"}
    | {"please", "ever", "i", "we", "prefer", "like", "to", "rather", "would", "d", "want", "you"}
    | {"the", "a", "an", "in", "of", "for", "our", "all", "any", "with"}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Promotion:
    """One event promoted from user text.

    Attributes:
        kind: What the text states (decision, rule, preference, task).
        text: The text to remember (for a reversal: only what to do now).
        negated: Choices the text turns away from ("sqlite" in "don't use SQLite").
        key: Identity for supersede: a later promotion with the same key replaces this one.
    """

    kind: EventKind
    text: str
    negated: tuple[str, ...] = ()
    key: str = ""


def is_approval(text: str) -> bool:
    """A short go-ahead ("yes, do it") that is not a request of its own."""
    stripped = text.strip()
    return len(stripped.split()) <= 8 and bool(APPROVAL.match(stripped))


def is_question(text: str) -> bool:
    """Questions ask; they decide nothing."""
    stripped = text.strip()
    if stripped.endswith("?"):
        return True
    # Without "?", only a short single clause opening with a question word ("what is the port"):
    # "When tests fail, always retry once" is a rule, and "can we…" needs its "?".
    single_clause = not re.search(r"[,;:.!]\s", stripped) and len(stripped.split()) <= 12
    return single_clause and bool(QUESTION.match(stripped))


def negated_terms(text: str) -> tuple[str, ...]:
    """Words the text turns away from: "don't use SQLite" → ("sqlite",)."""
    terms = []
    for match in NEGATION.finditer(text):
        word = next(group for group in match.groups() if group)
        terms.append(word.lower().strip(".,"))
    return tuple(dict.fromkeys(term for term in terms if term))


def affirmative_part(text: str) -> str:
    """The sentences of a reversal that say what to do now, without the rejected choice."""
    negated = negated_terms(text)
    kept = [
        sentence
        for sentence in SENTENCE.split(text.strip())
        if sentence and not any(term in sentence.lower() for term in negated)
    ]
    return " ".join(kept) if kept else text


def topic_key(text: str) -> str:
    """A stable key for a piece of text: its lower-cased words."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))[:120]


SUBJECT = re.compile(
    r"\bfor (?:the |our |this )?(?P<subject>[a-z][\w -]{2,40}?)\s*(?:[.,;!]|$)", re.I
)


def with_subject(summary: str, text: str) -> str:
    """Carry what a reversal is about ("for the export cache") into its affirmative summary."""
    match = SUBJECT.search(text)
    if match is None or match.group("subject").lower() in summary.lower():
        return summary
    return f"{summary.rstrip('.')} (for the {match.group('subject')})."


def decision_topic(text: str) -> str:
    """What a decision is about, so a later decision on the same topic supersedes it.

    "use Redis for the cache" and "let's go with Memcached for the cache" share the topic
    ``topic:cache``; a decision with no recognisable topic is keyed by its own words.
    """
    for match in TOPIC.finditer(text):
        topic = next((group for group in match.groups() if group), "")
        words = topic_key(topic)
        if words and words not in TOPIC_STOPWORDS:
            return f"topic:{words}"
    return topic_key(text)


def rule_topic(text: str) -> str:
    """What a rule is about, without its polarity or word order.

    "Always use tabs" and "never use tabs" share ``rule:tabs use``, so the later one
    supersedes the earlier.
    """
    words = sorted({w for w in topic_key(text).split() if w not in POLARITY_WORDS})
    return "rule:" + " ".join(words)[:110] if words else topic_key(text)


def promote(text: str) -> list[Promotion]:
    """Decisions, rules, preferences and tasks stated in one user message."""
    stripped = text.strip()
    if not stripped or is_approval(stripped) or is_question(stripped):
        return []
    statement = promote_statement(stripped)
    promotions = [statement] if statement else []
    standing = statement is not None and statement.kind is EventKind.RULE
    if TASK.search(stripped) and not standing:  # "remember to always X" is a rule, not a task
        promotions.append(
            Promotion(kind=EventKind.TASK_CREATE, text=stripped, key=topic_key(stripped))
        )
    elif done := done_part(stripped):  # which open task it closes is the snapshot's to match
        promotions.append(
            Promotion(kind=EventKind.TASK_COMPLETE, text=done, key="done:" + topic_key(done))
        )
    return promotions


def done_part(text: str) -> str:
    """The sentences saying something is done ("X is done. Now do Y" → "X is done.")."""
    return " ".join(sentence for sentence in SENTENCE.split(text) if DONE.search(sentence))


def promote_statement(text: str) -> Promotion | None:
    """The one decision, preference or rule a message states, if any (in that precedence)."""
    if DECISION.search(text) or negated_terms(text):
        negated = negated_terms(text)
        summary = with_subject(affirmative_part(text), text) if negated else text
        # A reversal names its topic in the clause it rejects ("don't use X for the cache"),
        # which the affirmative summary drops: take the topic from the whole message.
        topic = decision_topic(text)
        key = topic if negated and topic.startswith("topic:") else decision_topic(summary)
        return Promotion(kind=EventKind.DECISION, text=summary, negated=negated, key=key)
    if PREFERENCE.search(text):
        return Promotion(kind=EventKind.PREFERENCE, text=text, key=rule_topic(text))
    if RULE.search(text):
        return Promotion(kind=EventKind.RULE, text=text, key=rule_topic(text))
    return None


__all__ = [
    "Promotion",
    "affirmative_part",
    "decision_topic",
    "done_part",
    "is_approval",
    "is_question",
    "negated_terms",
    "promote",
    "rule_topic",
    "topic_key",
]
