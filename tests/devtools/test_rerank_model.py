"""The rerank model's trainer: the pools it fits on are the search's, its order the search's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.recall import Conversation, load_dataset
from plait.devtools.rerank_model import (
    AGENT_FEATURES,
    Asked,
    alone,
    asked,
    fit,
    indexed_turns,
    scored,
    sorted_leaving_each_out,
)
from plait.state.ranking import TurnIndex, rank_turns, reranked
from plait.state.rerank import CHAT, CODING, RERANK_FEATURES, RERANK_POOL

DEVLOG = Path(__file__).parents[2] / "datasets" / "devlog.json"


def devlog_questions() -> tuple[list[Asked], Conversation]:
    conversation = load_dataset(DEVLOG).conversations[0]
    _, questions = asyncio.run(asked(0, conversation, None))  # words alone: no model to load
    return questions, conversation


def test_the_trainer_orders_a_pool_as_the_search_does_with_the_same_model() -> None:
    questions, conversation = devlog_questions()
    assert len(questions) == len(conversation.questions)
    assert all(len(q.ids) <= RERANK_POOL for q in questions)
    assert all(q.features.shape == (len(q.ids), len(RERANK_FEATURES)) for q in questions)
    # devlog is a user's sessions with an agent: every pool turn is of that kind
    assert all(q.agent.all() for q in questions)
    model = fit(questions, AGENT_FEATURES)
    assert model.score_weight > 0
    models = alone(model)
    index = InMemoryRecallIndex()
    asyncio.run(index.add_turns(indexed_turns(conversation)))
    group = index.group(conversation.id)
    for question, ask in zip(conversation.questions, questions, strict=True):
        pool = rank_turns(
            group, question.text, limit=RERANK_POOL, now=question.asked_at, rerank=False
        )
        assert [group.ids[t.position] for t in pool] == ask.ids
        searched = [group.ids[t.position] for t in reranked(group, pool, models, question.text)]
        assert ask.ranked_by(models) == searched


def test_the_fitted_model_ranks_its_own_questions_no_worse_than_the_first_stage() -> None:
    questions, _ = devlog_questions()
    before, after = (
        scored(questions, None),
        scored(questions, alone(fit(questions, AGENT_FEATURES))),
    )
    assert after[1] >= before[1] - 0.01  # NDCG@10 on the questions it was fitted on
    positives = np.concatenate([q.labels() for q in questions])
    assert 0 < positives.sum() < positives.size


def test_the_sorter_is_fitted_on_the_groups_vectors_and_each_held_out_is_told_its_kind() -> None:
    rng = np.random.default_rng(7)

    def group(centre: np.ndarray) -> TurnIndex:
        index = TurnIndex(vector_model="e")
        for number in range(30):
            index.add(f"t{number}", "s", f"turn {number}")
            vector = centre + rng.normal(0, 0.3, size=centre.size)
            index.vectors.set(number, "turn", (vector / np.linalg.norm(vector)).astype(np.float32))
        return index

    coding, chat = np.array([1.0, 0.0, 0.2]), np.array([0.0, 1.0, 0.2])
    groups = [group(coding), group(chat), group(coding), group(chat)]
    names = ["code1", "chat1", "code2", "chat2"]
    sorter, kinds = sorted_leaving_each_out(groups, names, [True, False, True, False], "e")
    assert kinds == [CODING, CHAT, CODING, CHAT]
    assert sorter.embedder == "e" and sorter.logit(coding) > 0 > sorter.logit(chat)
