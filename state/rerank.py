"""A second look at the order of the turns a search found: what kind of turn holds an answer.

The first stage (:func:`plait.state.ranking.rank_turns`) scores a turn by how well it matches
the query. Which of the turns it finds first holds an answer also depends on the turn itself: in
a chat between people a turn that follows a question is more often an answer than the question
is; a longer turn says more, up to a point; the turns of the sessions the search reaches first
hold more of the answers. A :class:`RerankModel`, a logistic regression over the first stage's
score and :data:`RERANK_FEATURES` of each of the first :data:`RERANK_POOL` turns, reorders them.

What holds an answer depends on the kind of conversation, so there is a model for each, over
features of its own (:class:`Reranker`). Between people (no turn of the session is a user's
prompt; fitted on LoCoMo conversations 1-5) it reads the questions around a turn, whether it
opens its session, its length and its session's place. With an agent (a session with a user's
prompt; fitted on plait's coding sessions and chats with an assistant, ``datasets/devlog.json``,
``codelog2`` to ``codelog13``, ``chatlog1`` to ``chatlog8``) a user's prompt holds the facts more
often than the agent's long replies, unless the query asks what the agent said or found, a
cause, a fix or where code lives (:data:`ASKS_THE_AGENT`), and a turn's own vector says more
than its window's, more still when the query asks what the agent said; it reads those, its
length and its session's place.

Coding sessions and chats with an assistant pull that model apart (a chat's facts are the
user's own; a coding session's answers are the agent's findings), so each has a model of its own
too, used when the group's turns tell which it is (:func:`conversation_kind`): a turn only an
agent at work in a checkout records (a file read or edited, git, a change of directory) says
coding; without one, a :class:`KindSorter` over the mean of the turns' vectors says coding or
chat once enough turns have one, or nothing, and the model fitted on both is used.

A model is linear in the first stage's score (as a share of the best one), so its order is the
order of that score plus a lift in the score's own units (:meth:`RerankModel.lifts`): the lift
is the ``rerank`` part of a ranked turn, and scores stay comparable between groups as the first
stage's are. It runs in every search as numpy arithmetic (about 0.1 ms) over
``plait/state/rerank_weights.json`` (fitted by ``python -m plait.devtools.rerank_model``:
``docs/benchmarks.md``, "Recall").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from plait.state.base.shipped import shipped_text

if TYPE_CHECKING:
    from plait.state.ranking import TurnIndex

RERANK_WEIGHTS = "rerank_weights.json"
# the turns reordered: the first stage's best (more gave the same order of the first ten on
# LoCoMo 1-5: 20, 30, 50 and 100 all within 0.003 recall@10)
RERANK_POOL = 50
# what the model reads of a turn beside the first stage's score, in this order; chosen by forward
# selection on LoCoMo 1-5, with and without long turns added, leaving one conversation out, among
# 18 candidates (docs/benchmarks.md, "Recall")
RERANK_FEATURES = (
    "follows a question",
    "follows a turn that ends in a question",
    "is a question",
    "opens its session",
    "length (log of its words, at most 3)",
    "its session's place among the pool's (log)",
    "is a user's prompt",
    "its own vector's cosine with the query",
    "is a user's prompt, the query asking what the agent said or found",
    "its own vector's cosine with the query, the query asking what the agent said or found",
)
SCORE_FEATURE = "first-stage score (share of the best)"
# the kinds of conversation, each with its model, as the shipped file names them
BETWEEN_PEOPLE = "between people"
WITH_AN_AGENT = "with an agent"
CODING = "coding"
CHAT = "chat"
# the kind of a conversation with an agent, as the shipped file names its sorter
KIND_SORTER = "kind of conversation with an agent"
LENGTH_CAP = 3.0  # about 19 words: beyond, a longer turn is no likelier an answer
# a query about what the agent said, asked in the past ("which hotel did you suggest?", "what was
# your fix?"; not "which herb should stay out of any recipe you give me?", which asks what the
# user wants) or found: a cause or a fix ("why did the worker die?", "what made CI fail?", "how
# did we get past the 403s?"), where code lives ("which file sends email?", "where is the retry
# defined?"). Its
# answer is the agent's turn, not the user's prompt: in plait's coding sessions 140 of the 162
# turns that answer a question about a bug are the agent's, 67 of 71 about a file
ASKS_THE_AGENT = re.compile(
    r"\b(did|were|had|have)\s+you\b"
    r"|\byou\s+(\w+\s+){0,2}(said|suggested|recommended|told|advised|mentioned|gave|picked"
    r"|pointed|put|thought|proposed|found|wrote|came up)\b"
    r"|\byour\s+(fix|advice|suggestion|recommendation|idea|plan|answer|take)\b"
    r"|^\W*(why|how come)\b|\bwhat\s+(made|caused|broke|fixed|was\s+(behind|causing|wrong)"
    r"|went\s+wrong|left)\b|\broot\s+cause|\bhow\s+did\s+we\s+(get\s+past|fix|get\s+it)\b"
    r"|\bhow\s+was\s+(that|it)\s+fixed\b"
    r"|\bwhich\s+(files?|workflow|module|script|directory|folder|class|function|endpoint|table"
    r"|migration|config)\b|\bwhat\s+(file|path)\b|\bpath\s+of\b"
    r"|^\W*where('s|\s+is|\s+are|\s+does|\s+do)\b.*\b(defined|implemented|declared|kept|stored"
    r"|configured|set|handled|lives?|called|registered|written|generated|built|deployed"
    r"|comes?\s+from|code|file|module|script|tests?)\b",
    re.IGNORECASE,
)


# the own cosine again, for a query that asks what the agent said: a user's prompt that asked
# for it ("can you suggest a hotel?") matches such a query ("which hotel did you suggest?") more
# closely than the long reply that holds the answer
ASKED_OWN = RERANK_FEATURES.index(
    "its own vector's cosine with the query, the query asking what the agent said or found"
)


def pool_features(
    index: TurnIndex,
    positions: Sequence[int],
    query_vector: np.ndarray | None = None,
    query: str = "",
) -> np.ndarray:
    """:data:`RERANK_FEATURES` of the pool's turns, one row each, in the first stage's order.

    A session's place is the order in which the pool first reaches one of its turns (0 for the
    best turn's). A fact kept as a key of its turn (no neighbours, not of the session's turns)
    follows no question and opens no session. A turn's own cosine (and its own cosine when the
    query asks what the agent said, 0 when it does not) is NaN without the query's vector or its
    own (recall embedder's) vector.
    """
    asks_the_agent = bool(ASKS_THE_AGENT.search(query))
    places: dict[int, int] = {}
    rows = []
    for position in positions:
        text = index.texts[position]
        before = index.previous[position]
        asked = index.texts[before] if before >= 0 else ""
        place = places.setdefault(index.session_of[position], len(places))
        rows.append(
            (
                float("?" in asked),
                float(asked.rstrip().endswith("?")),
                float("?" in text),
                float(index.session_turns(position)[:1] == [position]),
                min(math.log1p(index.views["turn"].lengths[position]), LENGTH_CAP),
                math.log1p(place),
                float(index.is_prompt(position)),
                math.nan,
                float(index.is_prompt(position) and asks_the_agent),
                math.nan,
            )
        )
    features = np.array(rows, dtype=np.float64).reshape(len(rows), len(RERANK_FEATURES))
    if query_vector is not None and len(rows):
        own = index.vectors.own_cosines(positions, query_vector)
        features[:, RERANK_FEATURES.index("its own vector's cosine with the query")] = own
        features[:, ASKED_OWN] = own * float(asks_the_agent)
    return features


def with_agent_rows(index: TurnIndex, positions: Sequence[int]) -> np.ndarray:
    """Per pool turn, whether its session is one in which a user prompts an agent."""
    return np.array([index.with_agent(position) for position in positions], dtype=bool)


def best_of(scores: np.ndarray) -> float:
    """A pool's best first-stage score (its first), the unit of a score's share; 1 without one."""
    return float(scores[0]) if scores.size and scores[0] > 0 else 1.0


@dataclass(frozen=True)
class RerankModel:
    """A logistic regression over the first stage's score share and some :data:`RERANK_FEATURES`.

    ``features``: the names of those it reads; ``score_weight`` weighs the score as a share of
    the pool's best; ``weights`` and ``means`` are per feature read (the means centre the lift,
    so an average turn is lifted by 0, and a turn without a value, NaN, by nothing for it).
    """

    features: tuple[str, ...]
    score_weight: float
    weights: tuple[float, ...]
    means: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        if not self.score_weight > 0:
            raise ValueError("a rerank model must rank a better first-stage score higher")
        unknown = [name for name in self.features if name not in RERANK_FEATURES]
        if unknown:
            raise ValueError(f"a rerank model reads other features ({unknown}): retrain it")
        if len(self.weights) != len(self.features) or len(self.means) != len(self.features):
            raise ValueError(f"a rerank model weighs its {len(self.features)} features")

    def lifts(self, features: np.ndarray, best: float) -> np.ndarray:
        """Per turn, what the model adds to its first-stage score, in that score's units.

        ``features``: one row of :data:`RERANK_FEATURES` per turn (:func:`pool_features`);
        ``best``: the pool's best first-stage score. The model's logit is ``score_weight *
        score / best + features' part + bias``; ordering by it is ordering by ``score + lift``.
        """
        columns = [RERANK_FEATURES.index(name) for name in self.features]
        centred = np.nan_to_num(features[:, columns] - np.asarray(self.means))
        return (centred @ np.asarray(self.weights)) * (best / self.score_weight)

    def fields(self) -> dict[str, Any]:
        """The model as its part of the shipped file holds it."""
        return {
            "features": self.features,
            "score weight": self.score_weight,
            "weights": self.weights,
            "means": self.means,
            "bias": self.bias,
        }

    @classmethod
    def from_fields(cls, raw: dict[str, Any]) -> RerankModel:
        """A model from its part of the shipped file."""
        return cls(
            features=tuple(str(name) for name in raw["features"]),
            score_weight=float(raw["score weight"]),
            weights=tuple(float(w) for w in raw["weights"]),
            means=tuple(float(m) for m in raw["means"]),
            bias=float(raw["bias"]),
        )


@dataclass(frozen=True)
class KindSorter:
    """Tells a group of coding sessions from one of chats with an assistant by its vectors.

    A logistic regression over a turn's vector (``embedder``'s, the recall embedder that made
    them), fitted on turns of coding sessions (1) and chats (0). A group's logit is the mean of
    its turns', the logit of their mean vector: above ``margin`` it says :data:`CODING`, below
    ``-margin`` :data:`CHAT`, in between, with fewer than ``fewest`` vectors or with another
    embedder's, nothing.
    """

    embedder: str
    weights: tuple[float, ...]
    bias: float
    margin: float
    fewest: int

    def logit(self, mean: np.ndarray) -> float:
        """A group's logit from the mean of its turns' vectors."""
        return float(mean @ np.asarray(self.weights)) + self.bias

    def kind(self, mean: np.ndarray | None, count: int, embedder: str | None) -> str | None:
        """:data:`CODING`, :data:`CHAT` or None (not told) for a group's mean vector."""
        if mean is None or count < self.fewest or embedder != self.embedder:
            return None
        if mean.shape != (len(self.weights),):
            return None
        logit = self.logit(mean)
        return CODING if logit >= self.margin else CHAT if logit <= -self.margin else None

    def fields(self) -> dict[str, Any]:
        """The sorter as its part of the shipped file holds it."""
        return {
            "embedder": self.embedder,
            "margin": self.margin,
            "fewest vectors": self.fewest,
            "bias": self.bias,
            "weights": self.weights,
        }

    @classmethod
    def from_fields(cls, raw: dict[str, Any]) -> KindSorter:
        """A sorter from its part of the shipped file."""
        return cls(
            embedder=str(raw["embedder"]),
            weights=tuple(float(w) for w in raw["weights"]),
            bias=float(raw["bias"]),
            margin=float(raw["margin"]),
            fewest=int(raw["fewest vectors"]),
        )


def conversation_kind(index: TurnIndex, sorter: KindSorter | None) -> str | None:
    """Whether a group's conversations with an agent are coding sessions or chats; None: unknown.

    A turn only an agent at work in a checkout records (:attr:`TurnIndex.works_on_code`) says
    coding; else the ``sorter`` reads the mean of the group's turn vectors.
    """
    if index.works_on_code:
        return CODING
    if sorter is None:
        return None
    mean, count = index.vectors.mean_row()
    return sorter.kind(mean, count, index.vector_model)


@dataclass(frozen=True)
class Reranker:
    """A :class:`RerankModel` for each kind of conversation: between people, with an agent.

    With an agent, ``coding`` and ``chat`` (when fitted) serve a group whose kind is known
    (:func:`conversation_kind` with ``sorter``); ``with_an_agent``, fitted on both, the rest.
    """

    between_people: RerankModel
    with_an_agent: RerankModel
    coding: RerankModel | None = None
    chat: RerankModel | None = None
    sorter: KindSorter | None = None

    def agent_model(self, kind: str | None) -> RerankModel:
        """The model for a group's conversations with an agent, of this kind (None: unknown)."""
        chosen = {CODING: self.coding, CHAT: self.chat}.get(kind or "")
        return chosen or self.with_an_agent

    def lifts(
        self, features: np.ndarray, agent: np.ndarray, best: float, kind: str | None = None
    ) -> np.ndarray:
        """Per turn, its lift by the model of its kind of conversation (``agent``: with one).

        ``kind``: the group's conversations with an agent (:func:`conversation_kind`).
        """
        people = self.between_people.lifts(features, best)
        if not agent.any():
            return people
        return np.where(agent, self.agent_model(kind).lifts(features, best), people)

    def reorder(
        self,
        scores: np.ndarray,
        features: np.ndarray,
        agent: np.ndarray,
        kind: str | None = None,
    ) -> tuple[np.ndarray, list[int]]:
        """The lifts of a pool and its order by ``score + lift`` (ties: the first stage's order).

        ``scores``: the first stage's, best first; ``features``: their :func:`pool_features`;
        ``agent``: their :func:`with_agent_rows`; ``kind``: the group's
        (:func:`conversation_kind`).
        """
        lifts = self.lifts(features, agent, best_of(scores), kind)
        lifted = scores + lifts
        return lifts, sorted(range(len(lifted)), key=lambda i: (-lifted[i], i))

    def to_json(self) -> str:
        """The models as the shipped file holds them."""
        fields: dict[str, Any] = {
            "score feature": SCORE_FEATURE,
            BETWEEN_PEOPLE: self.between_people.fields(),
            WITH_AN_AGENT: self.with_an_agent.fields(),
        }
        for name, model in ((CODING, self.coding), (CHAT, self.chat)):
            if model is not None:
                fields[f"{WITH_AN_AGENT}, {name}"] = model.fields()
        if self.sorter is not None:
            fields[KIND_SORTER] = self.sorter.fields()
        return json.dumps(fields, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Reranker:
        """Read a models file; its features must be today's."""
        raw = json.loads(text)
        if raw["score feature"] != SCORE_FEATURE:
            raise ValueError(f"{RERANK_WEIGHTS} was fitted on another score: retrain it")
        kinds = {
            name: RerankModel.from_fields(raw[key])
            for name in (CODING, CHAT)
            if (key := f"{WITH_AN_AGENT}, {name}") in raw
        }
        sorter = raw.get(KIND_SORTER)
        return cls(
            between_people=RerankModel.from_fields(raw[BETWEEN_PEOPLE]),
            with_an_agent=RerankModel.from_fields(raw[WITH_AN_AGENT]),
            coding=kinds.get(CODING),
            chat=kinds.get(CHAT),
            sorter=KindSorter.from_fields(sorter) if sorter is not None else None,
        )


@cache
def rerank_model() -> Reranker | None:
    """The rerank models that ship with plait, or None when their file is missing."""
    text = shipped_text("plait.state", RERANK_WEIGHTS)
    return Reranker.from_json(text) if text is not None else None


__all__ = [
    "ASKS_THE_AGENT",
    "BETWEEN_PEOPLE",
    "CHAT",
    "CODING",
    "KIND_SORTER",
    "KindSorter",
    "conversation_kind",
    "RERANK_FEATURES",
    "RERANK_POOL",
    "RERANK_WEIGHTS",
    "SCORE_FEATURE",
    "WITH_AN_AGENT",
    "best_of",
    "RerankModel",
    "Reranker",
    "rerank_model",
    "pool_features",
    "with_agent_rows",
]
