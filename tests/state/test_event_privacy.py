"""A ``SessionEvent`` cannot hold a secret: every text field is redacted when built or read back.

The secrets and look-alikes are those of ``tests/data/secrets.jsonl`` (see
``tests/test_redact_corpus.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plait.state.base.redact import REDACTED
from plait.state.events import (
    BODY_MAX_BYTES,
    LONG_BODY_MAX_BYTES,
    SUMMARY_MAX_CHARS,
    EventKind,
    SessionEvent,
    body_max_bytes,
)

CORPUS = Path(__file__).parents[1] / "data" / "secrets.jsonl"
CASES: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text().splitlines()]
SECRETS = [case for case in CASES if case["kind"] == "secret"]
LOOKALIKES = [case for case in CASES if case["kind"] == "lookalike"]


def event_with(text: str, **fields: Any) -> SessionEvent:
    """An event carrying ``text`` in every text field."""
    values: dict[str, Any] = {
        "kind": EventKind.DECISION,
        "summary": text,
        "body": text,
        "refs": (text, f"src/{text}"),
        "keywords": (text,),
        "key": text,
        "source_hook": text,
    }
    values.update(fields)
    return SessionEvent(root_session_id="root", session_id="root", **values)


def stored_text(event: SessionEvent) -> str:
    """Everything of the event that would be stored."""
    return event.model_dump_json()


@pytest.mark.parametrize("case", SECRETS, ids=[case["shape"] for case in SECRETS])
def test_event_every_text_field_is_redacted(case: dict[str, Any]) -> None:
    event = event_with(case["text"])
    stored = stored_text(event)
    assert [secret for secret in case["secrets"] if secret in stored] == []
    assert SessionEvent.model_validate_json(stored) == event


def test_event_lookalikes_survive_construction() -> None:
    changed = [
        case["shape"]
        for case in LOOKALIKES
        if event_with(case["text"][:500]).body != case["text"][:500]
    ]
    assert len(changed) / len(LOOKALIKES) <= 0.02, changed


def test_event_copy_with_new_text_is_redacted() -> None:
    event = event_with("harmless")
    copied = event.model_copy(update={"summary": "DB_PASS=hunter2hunter2", "body": "x"})
    assert "hunter2" not in copied.summary
    assert copied.key == "harmless"


def test_event_secret_at_the_cut_is_not_kept_in_part() -> None:
    secret = "sk-proj-NFJJWqRdhjkl7Pu6KWEihACt4WCjA70OUiWwxX2jk5"
    text = "a" * (SUMMARY_MAX_CHARS - 20) + " " + secret
    event = event_with(text)
    assert secret[:12] not in event.summary
    assert len(event.summary) <= SUMMARY_MAX_CHARS


def test_event_cut_never_splits_a_marker() -> None:
    text = "word " * 36 + "password=hunter2hunter2 " + "tail " * 40
    event = event_with(text)
    assert event.summary.endswith("…")
    assert "[REDACT" not in event.summary.replace(REDACTED, "")


def test_event_huge_text_is_capped_and_redacted() -> None:
    text = ("line of text\n" * 200_000) + "token=abcdefghijkl12345678"
    event = event_with(text)
    assert len(event.body.encode()) <= body_max_bytes(event.kind) <= LONG_BODY_MAX_BYTES
    assert "abcdefghijkl12345678" not in event.body
    output = event_with(text, kind=EventKind.TOOL_RESULT)  # raw tool output keeps less
    assert len(output.body.encode()) <= BODY_MAX_BYTES
    reply = event_with(text, kind=EventKind.MESSAGE)  # a reply is searchable: kept longer
    assert BODY_MAX_BYTES < len(reply.body.encode()) <= LONG_BODY_MAX_BYTES


PIECES = [*"abcXYZ019 =:-_/.@\n\t\"'<>", "password=", "token: ", "<private>", "</private>", "sk-"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=400).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, width=st.integers(min_value=0, max_value=600))
def test_event_reads_back_unchanged(text: str, width: int) -> None:
    event = event_with(" " * width + text)
    assert SessionEvent.model_validate_json(event.model_dump_json()) == event


def test_event_text_seen_before_is_still_capped_per_field() -> None:
    text = "word " * 80  # clean, longer than a summary, shorter than a ref
    first = event_with(text.strip())
    again = event_with(text.strip())
    assert len(again.summary) <= SUMMARY_MAX_CHARS and again.summary == first.summary
    assert again.key == text.strip() and again.body == text.strip()
    secret = "DB_PASS=hunter2hunter2"
    assert "hunter2" not in event_with(secret).key and "hunter2" not in event_with(secret).body
    assert "hunter2" not in stored_text(event_with(secret))  # every field, refs and keywords too
