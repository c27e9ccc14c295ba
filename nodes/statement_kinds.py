"""A second look at what the capture rules passed over: a small classifier on statement vectors.

The capture rules (:mod:`plait.nodes.statements`) know the phrasings they were written on; a
decision said in fresh words ("We're settling on gRPC between the services") is a statement of
no kind to them. Off the hot path, where the bundled embedder runs anyway, the drain embeds each
statement of a user's prompt that the rules gave no kind and a small network over its vector
(one hidden layer) says whether it is a decision, a preference or a standing rule ("Tests live
next to the code they test"), its probabilities blended with those of a regression over the
statement's words and word pairs (:class:`WordKinds`: "landed on", "sticking with" weigh there as
they may not in a sentence vector). Only what it is sure of
(:attr:`StatementKinds.threshold`) becomes an event, made as the rules make theirs, so the fold
and the envelope treat it the same way.

The weights ship in ``statement_kinds.json`` beside this module: trained by
``python -m plait.devtools.statement_model`` with the bundled model (its name is in the file;
another embedder's vectors are not used) on every labelled capture set whose misses were read and
the training sets written for it, the threshold chosen on those training sets held out one at a
time, never on the blind sets it is judged on.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

import numpy as np

from plait.nodes.capture import ASSISTANT_TEXT
from plait.nodes.statements import (
    HEDGE,
    REPORTED,
    SOMEONE_ELSES_LINE,
    Statement,
    StatementKind,
    make_statement,
    split_conjoined,
    statements,
)
from plait.state.base.shipped import shipped_text
from plait.state.events import EventKind, SessionEvent, Speaker

WEIGHTS = "statement_kinds.json"
# What the second look records, by who said it: the model states no taste or rule of the user's
PROMOTED: dict[Speaker, tuple[StatementKind, ...]] = {
    "user": (StatementKind.DECISION, StatementKind.PREFERENCE, StatementKind.RULE),
    "assistant": (StatementKind.DECISION,),
}
# Words that say a statement describes or weighs rather than chooses: what is in place ("the
# frontend currently uses Webpack 4", "Stripe is the only processor we support today"), options
# ("option A is Kafka", "pros and cons of …", "we could use Dramatiq or RQ"), the past, a context
# line. The rules' hedges (a hypothetical: "if we ever move to Kubernetes") and someone else's
# reported word (:data:`~plait.nodes.statements.HEDGE`, :data:`~plait.nodes.statements.REPORTED`)
# are checked as they are.
NOT_A_CHOICE = re.compile(
    r"\b(?:currently|today|right now|already (?:run|use|have)|we maintain|weighing|"
    r"option \w+ is|pros and cons|we could|could (?:use|go)|is the only|"
    r"historically|used to|back then|last year|"
    r"here are (?:the |a few |some |two |three )?(?:options|choices|alternatives))\b|"
    r"\b(?:options?|choices|alternatives) (?:are|is)\b|\b(?:options?|alternatives):|"
    r"\b(?:is|are|was|were) (?:about|around|roughly|approximately|nearly|almost) \d|"
    r"^(?:context|options?|please|pls|can you|could you)\b",
    re.IGNORECASE,
)
# Fewer words choose nothing the rules did not catch ("TODO for", "sounds right")
MIN_WORDS = 3
# A question that proposes rather than asks ("How about we just use JWTs for the tokens?")
SUGGESTION = re.compile(r"(?:how about|why don't we|shall we)\b", re.IGNORECASE)
# A word, as the word regression reads one: two or more letters or digits
WORD = re.compile(r"\b\w\w+\b")


def terms_of(text: str) -> Counter[str]:
    """A statement's words and neighbouring word pairs, lowercased, with how often each occurs."""
    words = WORD.findall(text.lower())
    return Counter(words + [f"{one} {two}" for one, two in pairwise(words)])


@dataclass(frozen=True, eq=False)
class WordKinds:
    """A softmax regression over a statement's terms (:func:`terms_of`), weighted tf-idf.

    Each known term weighs ``(1 + ln count) * idf``, the row scaled to unit length; terms it was
    not fitted on are left out.
    """

    terms: Mapping[str, int]
    idf: np.ndarray
    weights: np.ndarray  # one row per term, one column per class
    bias: np.ndarray

    def row(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The columns of a statement's known terms and their weights."""
        known = [
            (self.terms[term], count)
            for term, count in terms_of(text).items()
            if term in self.terms
        ]
        if not known:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        columns = np.asarray([column for column, _ in known], np.int64)
        values = (1.0 + np.log([count for _, count in known])) * self.idf[columns]
        return columns, (values / np.linalg.norm(values)).astype(np.float32)

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """One row per statement: each class's probability."""
        scores = np.tile(self.bias, (len(texts), 1))
        for number, text in enumerate(texts):
            columns, values = self.row(text)
            scores[number] += values @ self.weights[columns]
        return softmax(scores)

    def as_dict(self) -> dict[str, Any]:
        """Its part of the file it is kept in."""
        return {
            "terms": sorted(self.terms, key=self.terms.__getitem__),
            "idf": rounded(self.idf, 5),
            "weights": rounded(self.weights, 4),
            "bias": rounded(self.bias, 5),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WordKinds:
        """Read what :meth:`as_dict` wrote."""
        return cls(
            terms={term: column for column, term in enumerate(data["terms"])},
            idf=np.asarray(data["idf"], dtype=np.float32),
            weights=np.asarray(data["weights"], dtype=np.float32),
            bias=np.asarray(data["bias"], dtype=np.float32),
        )


def softmax(scores: np.ndarray) -> np.ndarray:
    """Each row's scores as probabilities."""
    raised = np.exp(scores - scores.max(axis=1, keepdims=True))
    return np.asarray(raised / raised.sum(axis=1, keepdims=True))


@dataclass(frozen=True, eq=False)
class StatementKinds:
    """A small network over one embedding model's statement vectors, blended with a regression.

    The network reads standardised vectors, the regression (:class:`WordKinds`) the words.
    ``layers``: each a (weights, bias) pair, a ReLU between two of them and a softmax over the
    last one's scores (one layer is a softmax regression). ``words``, when there is one, has
    ``blend`` of the say: the two models' probabilities are averaged with those weights.
    """

    model: str
    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    threshold: float
    words: WordKinds | None = None
    blend: float = 0.0

    def network(self, vectors: np.ndarray) -> np.ndarray:
        """One row per vector: each class's probability by the network alone."""
        scores = (vectors - self.mean) / self.scale
        for number, (weights, bias) in enumerate(self.layers):
            if number:
                scores = np.maximum(scores, 0.0)
            scores = scores @ weights + bias
        return softmax(scores)

    def probabilities(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """One row per statement (its vector and its text): each class's probability."""
        network = self.network(vectors)
        if self.words is None:
            return network
        return (1.0 - self.blend) * network + self.blend * self.words.probabilities(texts)

    def promoted(self, candidates: Sequence[Statement], vectors: np.ndarray) -> list[Statement]:
        """The candidates it is sure make a choice their speaker may make (:data:`PROMOTED`).

        Each is made as the rules make theirs, two choices in one sentence split as theirs are.
        """
        if not candidates:
            return []
        found = []
        texts = [statement.text for statement in candidates]
        for statement, row in zip(candidates, self.probabilities(vectors, texts), strict=True):
            best = int(row.argmax())
            kind = StatementKind(self.classes[best]) if self.classes[best] != "none" else None
            if kind in PROMOTED[statement.speaker] and row[best] >= self.threshold:
                found += split_conjoined(make_statement(kind, statement.text, statement.speaker))
        return found

    def as_json(self) -> str:
        """The file it is kept in."""
        return json.dumps(
            {
                "model": self.model,
                "classes": list(self.classes),
                "threshold": self.threshold,
                "mean": rounded(self.mean, 6),
                "scale": rounded(self.scale, 6),
                "layers": [
                    {"weights": rounded(weights, 5), "bias": rounded(bias, 5)}
                    for weights, bias in self.layers
                ],
                "blend": self.blend,
                "words": None if self.words is None else self.words.as_dict(),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> StatementKinds:
        """Read the file :meth:`as_json` wrote."""
        data = json.loads(text)
        return cls(
            model=str(data["model"]),
            classes=tuple(data["classes"]),
            mean=np.asarray(data["mean"], dtype=np.float32),
            scale=np.asarray(data["scale"], dtype=np.float32),
            layers=tuple(
                (
                    np.asarray(layer["weights"], dtype=np.float32),
                    np.asarray(layer["bias"], dtype=np.float32),
                )
                for layer in data["layers"]
            ),
            threshold=float(data["threshold"]),
            words=None if data.get("words") is None else WordKinds.from_dict(data["words"]),
            blend=float(data.get("blend", 0.0)),
        )


def rounded(values: np.ndarray, decimals: int) -> list[Any]:
    """Values as short JSON numbers (a float32's own digits would be written out in full)."""
    return np.asarray(values, dtype=np.float64).round(decimals).tolist()


@cache
def shipped() -> StatementKinds | None:
    """The classifier that ships with plait, or None when its file is missing."""
    text = shipped_text("plait.nodes", WEIGHTS)
    return StatementKinds.from_json(text) if text is not None else None


def undecided(text: str, speaker: Speaker = "user") -> list[Statement]:
    """The statements the rules gave no kind that may choose something, of a prompt or a reply.

    A question only when it proposes; never an approval or chatter, a hedge, someone else's
    reported word or pasted line, or a statement that describes or weighs (:data:`NOT_A_CHOICE`).
    """
    return [s for s in statements(text, speaker) if may_choose(s)]


def undecided_of(event: SessionEvent) -> list[Statement]:
    """The statements of an event the second look reads (:func:`undecided`); none of others.

    It reads a user's prompt, and a finished reply of the model in a root session (the model's
    choices in fresh words: "I'll lean on tenacity for the retries").
    """
    text = event.body or event.summary
    if event.kind is EventKind.PROMPT and event.speaker == "user":
        return undecided(text, "user")
    if event.kind is EventKind.MESSAGE and event.source_hook.endswith(f".{ASSISTANT_TEXT}"):
        return undecided(text, "assistant")
    return []


def may_choose(statement: Statement) -> bool:
    """Whether a statement the rules passed over may still be a decision, a preference or a rule."""
    text = statement.text
    if statement.kind is StatementKind.QUESTION:
        return SUGGESTION.match(text) is not None
    if statement.kind is not StatementKind.NONE or len(text.split()) < MIN_WORDS:
        return False
    return not (
        NOT_A_CHOICE.search(text)
        or HEDGE.search(text)
        or REPORTED.search(text)
        or SOMEONE_ELSES_LINE.match(text)
    )


__all__ = [
    "PROMOTED",
    "StatementKinds",
    "WordKinds",
    "may_choose",
    "shipped",
    "terms_of",
    "undecided",
    "undecided_of",
]
