"""Rule-based promotion: what user text becomes a decision, rule, preference or task."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.rules import (
    decision_topic,
    is_approval,
    is_question,
    negated_terms,
    promote,
    topic_key,
)
from plait.state.events import EventKind


def kinds_of(text: str) -> list[EventKind]:
    return [promotion.kind for promotion in promote(text)]


@pytest.mark.parametrize(
    "text",
    [
        "yes, do it",
        "Yes please, go ahead!",
        "ok",
        "OK, thanks",
        "sounds good, thanks!",
        "lgtm, ship it",
        "please do that",
        "sure, continue",
        "👍 yes",
        "Perfect.",
    ],
)
def test_rules_approvals_are_not_requests(text: str) -> None:
    assert is_approval(text)
    assert promote(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "yes, and also add a test for the empty case",
        "ok now refactor the parser into two modules",
        "do it in Rust",
    ],
)
def test_rules_an_approval_with_a_new_ask_is_a_request(text: str) -> None:
    assert not is_approval(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We decided to use SQLite for the cache.", EventKind.DECISION),
        ("Let's go with FastAPI for the web layer.", EventKind.DECISION),
        ("Switch the queue to RabbitMQ.", EventKind.DECISION),
        ("Decision: ship on Fridays only", EventKind.DECISION),
        ("Never use tabs in Python files.", EventKind.RULE),
        ("Tests must not hit the network.", EventKind.RULE),
        ("From now on run ruff before committing.", EventKind.RULE),
        ("Rule: keep functions under 20 lines", EventKind.RULE),
        ("I prefer pytest fixtures over setUp.", EventKind.PREFERENCE),
        ("TODO: add a changelog entry", EventKind.TASK_CREATE),
        ("Fix the parser and remember to add a test.", EventKind.TASK_CREATE),
        ("Done: the changelog entry", EventKind.TASK_COMPLETE),
        ("The rate limiting is done now.", EventKind.TASK_COMPLETE),
        ("We've finished the migration script.", EventKind.TASK_COMPLETE),
    ],
)
def test_rules_promote_user_text(text: str, kind: EventKind) -> None:
    assert kind in kinds_of(text)


@pytest.mark.parametrize(
    "text",
    [
        "The function should return 3 when the list is empty.",
        "Fix the bug in this repo's parser.",
        "Run the whole suite.",
        "How do we deploy this?",
        "Should we use Redis for the cache?",
        "",
        "   ",
    ],
)
def test_rules_plain_requests_and_questions_promote_nothing(text: str) -> None:
    assert promote(text) == []


def test_rules_a_question_is_recognised_without_a_question_mark() -> None:
    assert is_question("what is the default port")
    assert not is_question("use port 8080")


def test_rules_a_completion_is_keyed_for_matching_not_as_a_new_task() -> None:
    [done] = promote("The changelog entry is done.")
    assert done.kind is EventKind.TASK_COMPLETE and done.key.startswith("done:")
    assert kinds_of("TODO: check the job is done") == [EventKind.TASK_CREATE]
    assert promote("Is the export finished?") == []
    [closes] = promote("JSON export is done. Now update the export docs.")
    assert closes.text == "JSON export is done."


def test_rules_a_standing_reminder_is_a_rule_not_also_a_task() -> None:
    assert kinds_of("Remember to always run ruff.") == [EventKind.RULE]


def test_rules_decisions_on_the_same_topic_share_a_key() -> None:
    [first] = promote("We decided to use Redis for the cache.")
    [second] = promote("Let's go with Memcached for the cache")
    assert first.key == second.key == "topic:cache"
    [other] = promote("Let's use FastAPI for the API.")
    assert other.key != first.key


def test_rules_reversal_names_the_rejected_choice_and_keeps_the_new_one() -> None:
    [decision] = promote("Actually, don't use SQLite for the cache. Use Redis instead.")
    assert decision.kind is EventKind.DECISION
    assert decision.negated == ("sqlite",)
    assert decision.text == "Use Redis instead (for the cache)."


@pytest.mark.parametrize(
    ("text", "negated"),
    [
        ("use httpx instead of requests", ("requests",)),
        ("stop using the mock server", ("mock",)),
        ("not poetry anymore, uv", ("poetry",)),
        ("replace black with ruff format", ("black",)),
        ("use ruff", ()),
    ],
)
def test_rules_negated_terms(text: str, negated: tuple[str, ...]) -> None:
    assert negated_terms(text) == negated


def test_rules_topic_key_is_stable_and_bounded() -> None:
    assert topic_key("Use  Redis, please!") == topic_key("use redis please")
    assert len(topic_key("word " * 500)) <= 120
    assert decision_topic("use it for now") == topic_key("use it for now")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_rules_promote_never_fails_and_keeps_text_from_the_input(text: str) -> None:
    for promotion in promote(text):
        assert promotion.text and promotion.text in text.strip()
        assert len(promotion.key) <= 130


def test_rules_a_conditional_rule_is_not_a_question() -> None:
    assert kinds_of("When tests fail, always rerun them once.") == [EventKind.RULE]


def test_rules_a_reversed_rule_shares_the_key_of_the_old_one() -> None:
    [always] = promote("Always use tabs.")
    [never] = promote("Never use tabs.")
    [network] = promote("Tests must not hit the network.")
    [allowed] = promote("Tests must hit the network in CI.")
    assert always.key == never.key
    assert network.key != always.key and allowed.key != network.key


def test_a_reversal_keeps_the_topic_of_the_choice_it_rejects() -> None:
    from plait.nodes.rules import promote as promote_text

    [first] = promote_text("We decided to use SQLite for the export cache to keep it simple.")
    [reversal] = promote_text("Actually, don't use SQLite for the export cache. Use Redis instead.")
    assert reversal.key == first.key and reversal.key.startswith("topic:")
    assert "sqlite" not in reversal.text.lower()
