"""A later look at decisions the fold kept side by side: does the newer one replace the older?

The fold (:func:`plait.state.supersede.supersedes`) judges a new decision against those it holds
on the hot path, from words alone: the rules' evidence, else a small regression over what the
rules saw. Said in fresh words, a reversal often shows neither ("Route handlers return
EventLoopFuture chains." → "Route handlers are written as async throws functions."), and both
decisions stay. Off the hot path, where the bundled embedder runs anyway, the drain looks again
at each such pair: a regression over the rules' features and the two decisions' vectors
(:class:`VectorPairModel`) says whether the newer replaces the older, and where it is sure, the
drain appends a correction the next hook folds: a decision event naming the replaced decision's
event (``replaces:<id>``) and no decision's words, which takes that decision out of the snapshot
and adds nothing.

Only pairs the rules find no evidence on either way are asked (:func:`plait.state.supersede.ruled`
is None), and the model's decision is asked against the user's only when it carries a reversal
cue, as in the fold. The weights ship in ``supersede_vectors.json`` beside this module, trained
by ``python -m plait.devtools.pair_model`` with the bundled model (its name is in the file;
another embedder's vectors are not used).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from plait.state.base.shipped import shipped_text
from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import (
    REPLACES,
    Item,
    above,
    fold_snapshot,
    rejected_terms,
    replaced_ids,
)
from plait.state.supersede import (
    PAIR_FEATURES,
    has_reversal_cue,
    pair_features,
    ruled,
    supersedes,
    text_of,
)

VECTOR_PAIR_WEIGHTS = "supersede_vectors.json"
# How far back in a session's log the drain looks for the decisions a new one meets: a read of
# at most this many events per session and batch (a decision older than that is not weighed)
LOOKBACK_EVENTS = 1000


def vector_features(
    old: str, new: str, old_vector: np.ndarray, new_vector: np.ndarray
) -> np.ndarray:
    """What the model reads of a pair of decisions and their vectors.

    The rules' features (:func:`pair_features`), the cosine, the vectors' product and distance,
    and the new decision's vector (how a change is announced).
    """
    return np.concatenate(
        [
            np.asarray(pair_features(old, new), np.float32),
            [float(old_vector @ new_vector)],
            old_vector * new_vector,
            np.abs(old_vector - new_vector),
            new_vector,
        ]
    ).astype(np.float32)


@dataclass(frozen=True, eq=False)
class VectorPairModel:
    """A logistic regression over :func:`vector_features` (standardisation folded in)."""

    model: str  # the embedder whose vectors it reads
    weights: np.ndarray
    bias: float
    threshold: float

    def probability(
        self, old: str, new: str, old_vector: np.ndarray, new_vector: np.ndarray
    ) -> float:
        """How likely ``new`` replaces ``old``, by the model."""
        return float(self.probability_of(vector_features(old, new, old_vector, new_vector))[()])

    def probability_of(self, rows: np.ndarray) -> np.ndarray:
        """How likely pairs with these :func:`vector_features` rows (or one) are replacements."""
        scores = np.clip(self.bias + rows @ self.weights, -60.0, 60.0)
        return 1.0 / (1.0 + np.exp(-scores))

    def replaces(self, old: str, new: str, old_vector: np.ndarray, new_vector: np.ndarray) -> bool:
        """Whether the model is sure enough that ``new`` replaces ``old``."""
        return self.probability(old, new, old_vector, new_vector) >= self.threshold

    def as_json(self) -> str:
        """The model as its shipped file holds it."""
        fields = {"model": self.model, "features": PAIR_FEATURES, "threshold": self.threshold}
        weights = [round(float(w), 5) for w in self.weights]
        return json.dumps(fields | {"bias": round(self.bias, 6), "weights": weights}) + "\n"

    @classmethod
    def from_json(cls, text: str) -> VectorPairModel:
        """Read a model file; its rules' features must be today's."""
        raw = json.loads(text)
        if tuple(raw["features"]) != PAIR_FEATURES:
            raise ValueError(f"{VECTOR_PAIR_WEIGHTS} was fitted on other features: retrain it")
        weights = np.asarray(raw["weights"], np.float32)
        return cls(raw["model"], weights, float(raw["bias"]), float(raw["threshold"]))


@cache
def vector_pair_model() -> VectorPairModel | None:
    """The model that ships with plait, or None when its file is missing."""
    text = shipped_text("plait.nodes", VECTOR_PAIR_WEIGHTS)
    return VectorPairModel.from_json(text) if text is not None else None


def left_to_vectors(
    old: str, new: str, rejected: tuple[str, ...] = (), *, cue: bool = False
) -> bool:
    """Whether the fold keeps ``old`` beside ``new`` (bounded texts) with no evidence either way.

    The rules found none (:func:`ruled` is None) and the fold's own model did not replace it;
    with ``cue`` (the model's decision meeting the user's) the new one carries the reversal cue
    the fold asks of it.
    """
    if cue and not has_reversal_cue(new):
        return False
    return ruled(old, new, rejected, cue) is None and not supersedes(old, new, rejected, cue=cue)


def is_correction(event: SessionEvent) -> bool:
    """Whether an event is the drain's correction rather than a decision of its own."""
    return event.kind is EventKind.DECISION and bool(replaced_ids(event))


def held_beside(log: Sequence[SessionEvent], new: SessionEvent) -> list[Item]:
    """The decisions the fold holds beside ``new`` once it is folded, from the log before it."""
    decisions = [e for e in log if e.kind is EventKind.DECISION and e.id <= new.id]
    return [d for d in fold_snapshot(None, decisions).decisions if d.event_id != new.id]


def open_pairs(
    log: Sequence[SessionEvent], decisions: Sequence[SessionEvent]
) -> list[tuple[SessionEvent, Item]]:
    """Each decision (as the log holds it) with each held decision left to the vectors."""
    logged = {event.id: event for event in log}
    return [
        (new, held)
        for new in (logged.get(decision.id, decision) for decision in decisions)
        for held in held_beside(log, new)
        if left_to_vectors(*pair_texts(new, held), rejected_terms(new), cue=above(held, new))
    ]


def pair_texts(new: SessionEvent, held: Item) -> tuple[str, str]:
    """The held decision's text and the new one's, bounded as the fold reads them."""
    return text_of(held.text), text_of(new.summary)


def replacements(
    model: VectorPairModel,
    pairs: Sequence[tuple[SessionEvent, Item]],
    vectors: Mapping[str, np.ndarray],
) -> list[tuple[SessionEvent, list[int]]]:
    """Each new decision with the held ones the model is sure it replaces (none: left out)."""
    replaced: dict[int, tuple[SessionEvent, list[int]]] = {}
    for new, held in pairs:
        old_text, new_text = pair_texts(new, held)
        if model.replaces(old_text, new_text, vectors[old_text], vectors[new_text]):
            replaced.setdefault(new.id, (new, []))[1].append(held.event_id)
    return list(replaced.values())


def correction(new: SessionEvent, replaced: Sequence[int]) -> SessionEvent:
    """The event that takes the ``replaced`` decisions out, in ``new``'s session and time.

    It holds no decision's words, only event ids: forgetting a decision leaves no copy of it.
    """
    keywords = tuple(f"{REPLACES}{event_id}" for event_id in replaced)
    said = ", ".join(str(event_id) for event_id in replaced)
    return SessionEvent(
        root_session_id=new.root_session_id,
        session_id=new.session_id,
        kind=EventKind.DECISION,
        summary=f"decision {new.id} replaces decision {said}",
        keywords=keywords,
        source_hook="plait.refined",
        member=new.member,
        time=new.time,
    )


__all__ = [
    "LOOKBACK_EVENTS",
    "VECTOR_PAIR_WEIGHTS",
    "VectorPairModel",
    "correction",
    "held_beside",
    "is_correction",
    "left_to_vectors",
    "open_pairs",
    "pair_texts",
    "replacements",
    "vector_features",
    "vector_pair_model",
]
