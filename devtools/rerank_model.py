"""Train the model that reorders a search's best turns (``plait/state/rerank_weights.json``).

``uv run python -m plait.devtools.rerank_model locomo10.recall.json``: LoCoMo, converted with
``datasets/convert_locomo.py`` (not shipped: CC BY-NC). Each conversation's turns go into a
recall index with the configured recall embedder's vectors (each text once, cached on disk), and
each question is ranked by the first stage (:func:`plait.state.ranking.rank_turns` without the
model). Of its :data:`~plait.state.rerank.RERANK_POOL` best turns, those the question names as
evidence are the positives: a logistic regression over the first stage's score (as a share of
the best) and :data:`~plait.state.rerank.RERANK_FEATURES` is fitted to them.

It is fitted on conversations 1-5 only (:data:`CHOOSE_ON`). Printed: recall@10 and NDCG@10 of
the first stage and of the model, for each of those conversations held out once (a model fitted
on the other four) and for conversations 6-10 (the model fitted on 1-5), which judge it. The
same command with ``--dataset`` of another set (REALTALK, devlog) judges the shipped model there.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import choice_for, open_embedder
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.logistic import fit_logistic
from plait.devtools.recall import Conversation, load_dataset, ndcg_at_k, recall_at_k
from plait.state.base.settings import Settings
from plait.state.ranking import rank_turns
from plait.state.recall import IndexedTurn, TextEmbedder
from plait.state.rerank import (
    RERANK_POOL,
    RERANK_WEIGHTS,
    RerankModel,
    best_of,
    pool_features,
)

TARGET = Path(__file__).parents[1] / "state" / RERANK_WEIGHTS
CHOOSE_ON = 5  # the first five conversations
L2 = 1e-3
STEPS = 2000
RATE = 0.5
K = 10


@dataclass(frozen=True)
class Asked:
    """One question's first-stage pool: its turns' ids, scores and features, and its evidence."""

    conversation: int
    ids: list[str]
    scores: np.ndarray
    features: np.ndarray
    evidence: list[str]

    def shares(self) -> np.ndarray:
        """Each turn's first-stage score as a share of the pool's best."""
        return self.scores / best_of(self.scores)

    def labels(self) -> np.ndarray:
        """1 for a turn the question names as evidence."""
        wanted = set(self.evidence)
        return np.array([turn_id in wanted for turn_id in self.ids], dtype=float)

    def ranked_by(self, model: RerankModel | None) -> list[str]:
        """The pool's ids in the first stage's order, or in the model's."""
        if model is None:
            return self.ids
        return [self.ids[i] for i in model.reorder(self.scores, self.features)[1]]


def indexed_turns(conversation: Conversation) -> list[IndexedTurn]:
    """The conversation's turns as the recall index keeps them, one group per conversation."""
    return [
        IndexedTurn(
            id=turn.id,
            group_id=conversation.id,
            session=session.id,
            seq=position,
            said_at=session.started_at,
            kind="discovery",
            key="",
            text=turn.text,
        )
        for session, position, turn in conversation.turns()
    ]


async def asked(
    number: int, conversation: Conversation, embedder: TextEmbedder | None
) -> list[Asked]:
    """Every question of a conversation, ranked by the first stage over its turns."""
    turns = indexed_turns(conversation)
    index = InMemoryRecallIndex(vector_model=embedder.name if embedder else None)
    await index.add_turns(turns)
    if embedder is not None:
        jobs = await index.pending_embeddings(10**9)
        await index.store_vectors(jobs, await embedder.embed_passages([j.text for j in jobs]))
    group = index.group(conversation.id)
    found = []
    for question in conversation.questions:
        vector = await embedder.embed_query(question.text) if embedder else None
        pool = rank_turns(
            group,
            question.text,
            query_vector=vector,
            limit=RERANK_POOL,
            now=question.asked_at,
            rerank=False,
        )
        found.append(
            Asked(
                conversation=number,
                ids=[group.ids[turn.position] for turn in pool],
                scores=np.array([turn.score for turn in pool]),
                features=pool_features(group, [turn.position for turn in pool]),
                evidence=list(question.evidence),
            )
        )
    return found


def fit(questions: Sequence[Asked]) -> RerankModel:
    """The model fitted on these questions' pools."""
    shares = np.concatenate([q.shares() for q in questions])
    features = np.concatenate([q.features for q in questions])
    x = np.column_stack([shares, features])
    y = np.concatenate([q.labels() for q in questions])
    raw, bias = fit_logistic(x, y, l2=L2, steps=STEPS, rate=RATE)
    means = features.mean(0)
    return RerankModel(
        score_weight=round(float(raw[0]), 6),
        weights=tuple(round(float(w), 6) for w in raw[1:]),
        means=tuple(round(float(m), 6) for m in means),
        bias=round(bias + float(raw[1:] @ means), 6),
    )


def scored(questions: Sequence[Asked], model: RerankModel | None) -> tuple[float, float]:
    """Mean recall@10 and NDCG@10 of the questions, ranked by the first stage or the model."""
    if not questions:
        return 0.0, 0.0
    ranked = [(q.ranked_by(model), q.evidence) for q in questions]
    recall = sum(recall_at_k(ids, evidence, K) for ids, evidence in ranked) / len(ranked)
    ndcg = sum(ndcg_at_k(ids, evidence) for ids, evidence in ranked) / len(ranked)
    return recall, ndcg


def line(label: str, questions: Sequence[Asked], model: RerankModel | None) -> str:
    """One printed row: the first stage's figures and the model's."""
    before, after = scored(questions, None), scored(questions, model)
    return (
        f"{label} ({len(questions)} questions): recall@10 {before[0]:.3f} -> {after[0]:.3f}, "
        f"NDCG@10 {before[1]:.3f} -> {after[1]:.3f}"
    )


async def main() -> None:
    """Fit on conversations 1-5 and write the model, or (``--judge``) judge the shipped one."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="LoCoMo as convert_locomo.py writes it")
    parser.add_argument(
        "--judge", action="store_true", help="only judge the shipped model on this dataset"
    )
    args = parser.parse_args()
    embedder = open_embedder(choice_for(Settings()))
    dataset = load_dataset(args.dataset)
    questions = [
        q
        for number, conversation in enumerate(dataset.conversations)
        for q in await asked(number, conversation, embedder)
    ]
    if args.judge:
        print(line(args.dataset.name, questions, RerankModel.from_json(TARGET.read_text())))
        return
    chosen = [q for q in questions if q.conversation < CHOOSE_ON]
    for number in range(CHOOSE_ON):
        model = fit([q for q in chosen if q.conversation != number])
        print(
            line(
                f"conversation {number + 1} held out",
                [q for q in chosen if q.conversation == number],
                model,
            )
        )
    model = fit(chosen)
    print(line(f"conversations 1-{CHOOSE_ON}, fitted on", chosen, model))
    print(
        line(
            f"conversations {CHOOSE_ON + 1}-, judging",
            [q for q in questions if q.conversation >= CHOOSE_ON],
            model,
        )
    )
    TARGET.write_text(model.to_json(), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    asyncio.run(main())
