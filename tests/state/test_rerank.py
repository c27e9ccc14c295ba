"""The second look at a search's order: a turn's features, the shipped model, the reordering."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from plait.state.ranking import TurnIndex, rank_turns, reranked
from plait.state.rerank import (
    ASKS_THE_AGENT,
    CHAT,
    CODING,
    RERANK_FEATURES,
    RERANK_POOL,
    WITH_AN_AGENT,
    KindSorter,
    Reranker,
    RerankModel,
    conversation_kind,
    pool_features,
    rerank_model,
    with_agent_rows,
)


def features_of(
    index: TurnIndex, positions: list[int], vector: np.ndarray | None = None, query: str = ""
) -> list[dict[str, float]]:
    rows = pool_features(index, positions, vector, query)
    return [dict(zip(RERANK_FEATURES, row, strict=True)) for row in rows]


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_turns_features_read_its_question_its_neighbour_and_its_place() -> None:
    index = TurnIndex()
    index.add("q", "s1", "Which queue did we pick for the exports?")
    index.add("a", "s1", "RabbitMQ, see https://example.org/q?x=1 for why.")
    index.add("b", "s1", "Ok.")
    index.add("key", "s1", "Use RabbitMQ for the exports.", in_conversation=False)
    index.add("other", "s2", "The exports run nightly.")
    question, answer, after, key, other = features_of(index, [0, 1, 2, 3, 4])
    assert question["opens its session"] == 1 and question["is a question"] == 1
    assert question["follows a question"] == 0
    assert answer["follows a question"] == answer["follows a turn that ends in a question"] == 1
    assert answer["opens its session"] == 0
    # a question mark inside a turn is a question of sorts; only one at the end asks outright
    assert after["follows a question"] == 1 and after["follows a turn that ends in a question"] == 0
    # a fact kept as a key of its turn is no turn of the conversation: it opens nothing
    assert key["opens its session"] == 0 and key["follows a question"] == 0
    assert question["length (log of its words, at most 3)"] == pytest.approx(np.log1p(3))
    index.add("long", "s3", " ".join(f"word{n}" for n in range(40)))
    assert features_of(index, [5])[0]["length (log of its words, at most 3)"] == 3.0  # capped
    # sessions are placed in the order the pool reaches them: s1 first, then s2
    assert question["its session's place among the pool's (log)"] == 0
    assert other["its session's place among the pool's (log)"] == pytest.approx(np.log1p(1))
    assert features_of(index, [4, 0])[1]["its session's place among the pool's (log)"] > 0


def test_a_turns_features_read_who_said_it_and_its_own_vector() -> None:
    index = TurnIndex()
    index.add("prompt", "s1", "Why does the export time out?", prompt=True)
    index.add("reply", "s1", "The export waits on a lock.")
    index.add("later", "s1", "Fixed: the lock is gone.")
    index.vectors.set(0, "turn", unit(1, 0))
    index.vectors.set(1, "turn", unit(1, 1))
    prompt, reply, later = features_of(index, [0, 1, 2], unit(1, 0))
    assert prompt["is a user's prompt"] == 1 and reply["is a user's prompt"] == 0
    own = "its own vector's cosine with the query"
    assert prompt[own] == pytest.approx(1.0) and reply[own] == pytest.approx(np.sqrt(0.5))
    # no vector of its own, or no query vector: no value, which lifts the turn by nothing
    assert np.isnan(later[own])
    assert all(np.isnan(row[own]) for row in features_of(index, [0, 1]))
    # a query about what the agent said marks the user's prompts, whose answer it is not
    asked = "is a user's prompt, the query asking what the agent said or found"
    assert prompt[asked] == 0
    prompt, reply = features_of(index, [0, 1], None, "What did you say held the export up?")
    assert prompt[asked] == 1 and reply[asked] == 0


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("Which hotel did you suggest in Lisbon?", True),
        ("What pace did you tell me to hold?", True),
        ("What was your fix for the cracked buns?", True),
        ("How long you said the drive was?", True),
        ("What is my dog's name?", False),
        ("Which queue did we pick for the exports?", False),
        ("Can you remind me what I bought first?", False),
        ("Why did the staging worker keep getting killed?", True),
        ("What made CI fail on the migration that added the rollup?", True),
        ("How did we get past the permissionDenied errors?", True),
        ("The deploy once failed on a checksum. What caused it?", True),
        ("What did we decide about the export format?", False),
        ("Which file sends the reminder emails now?", True),
        ("Where is the retry policy for alert sends defined?", True),
        ("What is the path of the CI workflow?", True),
        ("Where is our wedding going to be held?", False),
        ("Which stretch did you give me for my back?", True),
        ("What was the recipe you recommended for the potluck?", True),
        # asked in the present, what the user wants from the agent: the user's own words
        ("Which herb should never show up in any recipe you give me?", False),
        ("I want a dish with local vegetables tonight. What would you suggest for me?", False),
    ],
)
def test_a_query_about_what_the_agent_said_is_told_apart(query: str, asks: bool) -> None:
    assert bool(ASKS_THE_AGENT.search(query)) is asks


def test_the_shipped_models_read_todays_features_and_rank_a_better_score_higher() -> None:
    models = rerank_model()
    assert models is not None
    people, agent = models.between_people, models.with_an_agent
    assert people.score_weight > 0 and agent.score_weight > 0
    said = dict(zip(people.features, people.weights, strict=True))
    # in a chat, a turn answering a question is more likely the answer than the question itself
    assert said["follows a question"] > 0 > said["is a question"]
    # with an agent, what the user said and a turn that matches the query alone count
    weighs = dict(zip(agent.features, agent.weights, strict=True))
    assert weighs["is a user's prompt"] > 0
    assert weighs["its own vector's cosine with the query"] > 0
    assert "follows a question" not in weighs  # fitted apart, on features of their own
    assert Reranker.from_json(models.to_json()) == models


def test_a_model_file_of_other_features_or_a_backwards_score_is_refused() -> None:
    models = rerank_model()
    assert models is not None
    raw = json.loads(models.to_json())
    agent = raw[WITH_AN_AGENT]
    colour = agent | {"features": [*agent["features"][:-1], "colour"]}
    with pytest.raises(ValueError, match="other features"):
        Reranker.from_json(json.dumps(raw | {WITH_AN_AGENT: colour}))
    with pytest.raises(ValueError, match="another score"):
        Reranker.from_json(json.dumps(raw | {"score feature": "rank"}))
    model = models.with_an_agent
    with pytest.raises(ValueError, match="better first-stage score"):
        replace(model, score_weight=0.0)
    with pytest.raises(ValueError, match="features"):
        replace(model, weights=model.weights[:-1])


def test_a_session_with_a_users_prompt_is_ranked_by_the_model_with_an_agent() -> None:
    index = TurnIndex()
    index.add("chat", "s1", "Did you see the deploy?")
    index.add("reply", "s1", "The deploy went out at noon.")
    index.add("prompt", "s2", "Why did the deploy fail?", prompt=True)
    index.add("answer", "s2", "The deploy failed on a missing secret.")
    index.add("fact", "s2", "The deploy needs the secret.", in_conversation=False)
    assert list(with_agent_rows(index, [0, 1, 2, 3, 4])) == [False, False, True, True, True]
    people = RerankModel(
        features=RERANK_FEATURES[:6],
        score_weight=1.0,
        weights=(1.0,) * 6,
        means=(0.0,) * 6,
        bias=0.0,
    )
    agent = replace(people, weights=(-1.0,) * 6)
    rows = pool_features(index, [0, 1, 2, 3])
    agent_rows = with_agent_rows(index, [0, 1, 2, 3])
    lifts = Reranker(between_people=people, with_an_agent=agent).lifts(rows, agent_rows, 2.0)
    assert list(lifts[:2]) == pytest.approx(list(people.lifts(rows[:2], 2.0)))
    assert list(lifts[2:]) == pytest.approx(list(agent.lifts(rows[2:], 2.0)))


def test_the_lift_orders_as_the_models_logit_does() -> None:
    model = RerankModel(
        features=RERANK_FEATURES[:6],
        score_weight=4.0,
        weights=(1.0, 0.5, -1.0, 0.0, 0.2, -0.5),
        means=(0.5,) * 6,
        bias=-2,
    )
    read = np.array([[0, 0, 1, 0, 1, 1], [1, 1, 0, 1, 3, 0], [0, 0, 0, 0, 1, 0.7]], dtype=float)
    # the features it does not read change nothing
    rows = np.column_stack([read, np.full((3, len(RERANK_FEATURES) - 6), 9.0)])
    scores, best = np.array([3.0, 2.5, 2.9]), 3.0
    lifted = scores + model.lifts(rows, best)
    # the logit the model stands for: bias + score weight * share + weights . (features - means)
    logits = model.bias + model.score_weight * scores / best
    logits += (read - np.asarray(model.means)) @ np.asarray(model.weights)
    assert list(np.argsort(-lifted)) == list(np.argsort(-logits))
    assert list(np.argsort(-lifted)) != list(np.argsort(-scores))  # the features did reorder


def test_an_answer_with_the_questions_score_is_put_before_the_question() -> None:
    index = TurnIndex()
    index.add("q", "s1", "Should the exports use RabbitMQ or Kafka?")
    index.add("a", "s1", "The exports use RabbitMQ; Kafka is too much for one consumer.")
    first_stage = rank_turns(index, "exports RabbitMQ Kafka", rerank=False)
    ranked = rank_turns(index, "exports RabbitMQ Kafka")
    assert {t.position for t in ranked} == {t.position for t in first_stage}
    assert ranked[0].position == 1
    for turn in ranked:
        assert turn.parts["rerank"] == pytest.approx(
            turn.score - sum(v for k, v in turn.parts.items() if k != "rerank")
        )


def test_the_model_reorders_the_pool_and_the_limit_cuts_after_it() -> None:
    index = TurnIndex()
    for number in range(RERANK_POOL + 10):
        index.add(f"t{number}", f"s{number}", f"Deploy note {number}: the deploy went fine?")
    index.add("answer", "s-last", "What about the deploy?")
    index.add("reply", "s-last", "The deploy uses blue-green now, with 2 slots and a smoke test.")
    pool = rank_turns(index, "deploy", limit=RERANK_POOL, rerank=False)
    model = rerank_model()
    assert model is not None
    assert [t.position for t in rank_turns(index, "deploy", limit=3)] == [
        t.position for t in reranked(index, pool, model)[:3]
    ]


def test_a_question_about_a_bugs_cause_lifts_the_agents_finding_not_the_users_report() -> None:
    index = TurnIndex()
    index.add(
        "report",
        "s1",
        "The PDF worker keeps dying with a segfault while it generates the invoice PDF.",
        prompt=True,
    )
    index.add(
        "finding",
        "s1",
        "The worker died because the PDF renderer loaded every invoice page into memory at once.",
    )

    def lifts(query: str) -> tuple[float, float]:
        by_position = {t.position: t.parts["rerank"] for t in rank_turns(index, query)}
        return by_position[0], by_position[1]

    # asked what the user reported, the user's prompt is lifted above the agent's reply
    report, finding = lifts("Which PDF worker segfault did I report?")
    assert report > finding
    # asked for a cause, the prompt's lift is gone: the answer is the agent's finding
    report, finding = lifts("Why did the PDF worker die while it generated the invoice PDF?")
    assert report <= finding


def test_the_models_with_an_agent_serve_a_group_by_its_kind() -> None:
    index = TurnIndex()
    index.add("prompt", "s1", "Why does the export time out?", prompt=True)
    index.add("reply", "s1", "The export waits on a lock.")
    people = RerankModel(
        features=RERANK_FEATURES[:6], score_weight=1.0, weights=(1.0,) * 6, means=(0.0,) * 6, bias=0
    )
    both, coding, chat = (replace(people, weights=(w,) * 6) for w in (-1.0, 2.0, 3.0))
    models = Reranker(between_people=people, with_an_agent=both, coding=coding, chat=chat)
    rows, agent = pool_features(index, [0, 1]), with_agent_rows(index, [0, 1])
    for kind, model in ((CODING, coding), (CHAT, chat), (None, both)):
        assert list(models.lifts(rows, agent, 2.0, kind)) == pytest.approx(
            list(model.lifts(rows, 2.0))
        )
    # a file without the kinds' models (or its sorter) serves every group by the one on both
    bare = Reranker(between_people=people, with_an_agent=both)
    assert list(bare.lifts(rows, agent, 2.0, CHAT)) == pytest.approx(list(both.lifts(rows, 2.0)))
    assert Reranker.from_json(bare.to_json()) == bare


def test_the_sorter_tells_a_kind_only_from_enough_vectors_of_its_embedder() -> None:
    sorter = KindSorter(embedder="e", weights=(4.0, -4.0), bias=0.0, margin=2.0, fewest=3)
    coding, chat, unsure = unit(1, 0), unit(0, 1), unit(1, 0.8)
    assert sorter.kind(coding, 3, "e") == CODING and sorter.kind(chat, 3, "e") == CHAT
    assert sorter.kind(unsure, 3, "e") is None  # logit 0.6: within the margin
    assert sorter.kind(coding, 2, "e") is None  # too few turns yet
    assert sorter.kind(coding, 3, "another model") is None
    assert sorter.kind(unit(1, 0, 0), 3, "e") is None  # vectors of another size
    assert sorter.kind(None, 0, "e") is None
    assert KindSorter.from_fields(json.loads(json.dumps(sorter.fields()))) == sorter


def test_a_groups_mean_vector_follows_its_turns_vectors_as_they_are_set_again() -> None:
    index = TurnIndex(vector_model="e")
    for number in range(3):
        index.add(f"t{number}", "s1", f"turn {number}")
    assert index.vectors.mean_row() == (None, 0)
    index.vectors.set(0, "turn", unit(1, 0))
    index.vectors.set(1, "turn", unit(0, 1))
    index.vectors.set(1, "turn", unit(1, 0))  # set again: its old vector no longer counts
    index.vectors.set(2, "turn", np.zeros(2, dtype=np.float32))  # an empty vector is none
    # a fact kept as a key of its turn, or captured as a turn of its own, was not said as such:
    # capture words it alike in any conversation, so its vector is not counted
    index.add("key", "s1", "Use the blue theme.", in_conversation=False)
    index.set_vector(3, "turn", unit(0, 1))
    index.add("fact", "s1", "Use the red theme.", said=False)
    index.set_vector(4, "turn", unit(0, 1))
    assert index.is_utterance(0) and not index.is_utterance(3) and not index.is_utterance(4)
    mean, count = index.vectors.mean_row()
    assert count == 2 and mean is not None and list(mean) == pytest.approx([1.0, 0.0])
    sorter = KindSorter(embedder="e", weights=(4.0, -4.0), bias=0.0, margin=2.0, fewest=2)
    assert conversation_kind(index, sorter) == CODING
    assert conversation_kind(index, replace(sorter, weights=(-4.0, 4.0))) == CHAT
    assert conversation_kind(index, None) is None


def test_a_turn_only_an_agent_at_work_in_a_checkout_records_makes_a_group_coding() -> None:
    index = TurnIndex()
    index.add("prompt", "s1", "Tell me about the garden.", prompt=True)
    assert not index.works_on_code and conversation_kind(index, None) is None
    index.add("edit", "s1", "Edited src/app.py", code_work=True)
    assert index.works_on_code and conversation_kind(index, None) == CODING
