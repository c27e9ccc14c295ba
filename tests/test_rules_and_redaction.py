"""Rule-based promotion of user text, and redaction of private spans and secrets."""

from __future__ import annotations

import pytest

from plait.nodes.redact import REDACTED, redact
from plait.nodes.rules import is_approval, promote
from plait.state.events import EventKind


@pytest.mark.parametrize(
    "text", ["yes, do it", "Sounds good, go ahead.", "ok", "LGTM!", "Looks fine."]
)
def test_rules_approvals_are_not_requests(text: str) -> None:
    assert is_approval(text) and promote(text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Rule: never commit directly to main.", EventKind.RULE),
        ("Tests must not hit the network.", EventKind.RULE),
        ("We decided to use SQLite for the cache.", EventKind.DECISION),
        ("Let's go with FastAPI.", EventKind.DECISION),
        ("I prefer pytest fixtures over setUp.", EventKind.PREFERENCE),
        ("TODO: add a changelog entry", EventKind.TASK_CREATE),
    ],
)
def test_rules_promote_user_text(text: str, kind: EventKind) -> None:
    assert kind in [p.kind for p in promote(text)]


def test_rules_questions_and_chatter_promote_nothing() -> None:
    assert promote("How many turns have we done? Never mind.") == []
    assert promote("Great. Run the whole suite too.") == []


def test_rules_reversal_names_the_rejected_choice_and_keeps_the_new_one() -> None:
    [decision] = promote("Actually, don't use SQLite for the cache. Use Redis instead.")
    assert decision.kind is EventKind.DECISION
    assert decision.negated == ("sqlite",)
    assert decision.text == "Use Redis instead."


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdefghij",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    ],
)
def test_redact_replaces_known_secret_shapes(secret: str) -> None:
    assert secret not in redact(f"token is {secret} ok")
    assert REDACTED in redact(f"token is {secret} ok")


def test_redact_url_passwords_env_assignments_and_private_keys() -> None:
    text = (
        "db postgres://app:hunter2@db:5432/x\nGITHUB_TOKEN=abc123def456\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\nAuthorization: Bearer abcdefghijklmnop"
    )
    cleaned = redact(text)
    for secret in ("hunter2", "abc123def456", "MIIB", "abcdefghijklmnop"):
        assert secret not in cleaned
    assert "postgres://app:" in cleaned


def test_redact_strips_private_spans_even_unclosed() -> None:
    assert redact("a <private>my ssn</private> b") == "a  b"
    assert redact("a <PRIVATE>everything after") == "a "
    assert redact("nothing secret here") == "nothing secret here"
