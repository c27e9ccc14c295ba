"""A second look at what the capture rules passed over: a small classifier on statement vectors.

The capture rules (:mod:`plait.nodes.statements`) know the phrasings they were written on; a
decision said in fresh words ("We're settling on gRPC between the services") is a statement of
no kind to them. Off the hot path, where the bundled embedder runs anyway, the drain embeds each
statement of a user's prompt that the rules gave no kind and a small network over its vector
(one hidden layer) says whether it is a decision, a preference or a standing rule ("Tests live
next to the code they test"). Only what it is sure of
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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
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


@dataclass(frozen=True, eq=False)
class StatementKinds:
    """A small network over standardised statement vectors of one embedding model.

    ``layers``: each a (weights, bias) pair, a ReLU between two of them and a softmax over the
    last one's scores (one layer is a softmax regression).
    """

    model: str
    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    threshold: float

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """One row per vector: each class's probability."""
        scores = (vectors - self.mean) / self.scale
        for number, (weights, bias) in enumerate(self.layers):
            if number:
                scores = np.maximum(scores, 0.0)
            scores = scores @ weights + bias
        scores -= scores.max(axis=1, keepdims=True)
        raised = np.exp(scores)
        return np.asarray(raised / raised.sum(axis=1, keepdims=True))

    def promoted(self, candidates: Sequence[Statement], vectors: np.ndarray) -> list[Statement]:
        """The candidates it is sure make a choice their speaker may make (:data:`PROMOTED`).

        Each is made as the rules make theirs, two choices in one sentence split as theirs are.
        """
        if not candidates:
            return []
        found = []
        for statement, row in zip(candidates, self.probabilities(vectors), strict=True):
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
        )


def rounded(values: np.ndarray, decimals: int) -> list[Any]:
    """Values as short JSON numbers (a float32's own digits would be written out in full)."""
    return np.asarray(values, dtype=np.float64).round(decimals).tolist()


@cache
def shipped() -> StatementKinds | None:
    """The classifier that ships with plait, or None when its file is missing."""
    source = resources.files("plait.nodes").joinpath(WEIGHTS)
    if not source.is_file():
        return None
    return StatementKinds.from_json(source.read_text(encoding="utf-8"))


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


__all__ = ["PROMOTED", "StatementKinds", "may_choose", "shipped", "undecided", "undecided_of"]
