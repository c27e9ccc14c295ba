"""Redaction: private spans and secrets never get past the extractors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.redact import REDACTED, redact, strip_private


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "sk-abcdefghijklmnopqrstuvwxyz0123456789",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "glpat-xK9mQ2vL7pR4tW8nZ3bY",
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdefghij",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "sk_live_abcdefghijklmnop1234",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    ],
)
def test_redact_replaces_known_secret_shapes(secret: str) -> None:
    cleaned = redact(f"token is {secret} ok")
    assert secret not in cleaned
    assert REDACTED in cleaned and cleaned.startswith("token is ")


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("postgres://app:hunter2@db:5432/x", "hunter2", "postgres://app:"),
        ("redis://:s3cretpw@127.0.0.1:6379/0", "s3cretpw", "@127.0.0.1:6379"),
        ("GITHUB_TOKEN=abc123def456", "abc123def456", "GITHUB_TOKEN="),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", "export "),
        ("STRIPE_KEY=pk9ab8cd7ef", "pk9ab8cd7ef", "STRIPE_KEY="),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh", '"api_key"'),
        ("db_password = 'hunter22'", "hunter22", "db_password"),
        ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop", "Bearer"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Basic"),
    ],
)
def test_redact_assignments_urls_and_headers_keep_their_names(
    text: str, secret: str, kept: str
) -> None:
    cleaned = redact(text)
    assert secret not in cleaned
    assert kept in cleaned


def test_redact_private_keys_even_when_cut_off() -> None:
    whole = "-----BEGIN RSA PRIVATE KEY-----\nMIIBsecret\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact(whole) == f"{REDACTED}\nafter"
    assert "MIIB" not in redact("-----BEGIN OPENSSH PRIVATE KEY-----\nMIIBsecret and more")


@pytest.mark.parametrize(
    "text",
    [
        "password: str",
        "primary_key=True",
        "PWD=/home/me/project",
        "the author: me",
        "nothing secret here",
        "sort by key then value",
    ],
)
def test_redact_leaves_harmless_text_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_strips_private_spans_even_unclosed() -> None:
    assert redact("a <private>my ssn</private> b") == "a  b"
    assert redact("a <PRIVATE>everything after") == "a "
    assert redact('a <private reason="x">one</private> b <private>two</private>c') == "a  b c"
    assert strip_private("stray </private> close") == "stray  close"


def test_redact_survives_lone_surrogates_and_nul() -> None:
    assert (
        redact("x \udcff y\x00 sk-ant-api03-abcdefghijklmnopqrstuv") == f"x \udcff y\x00 {REDACTED}"
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_redact_is_idempotent_and_hides_private_spans(before: str, after: str) -> None:
    private = "zq-private-marker-zq"
    text = f"{before}<private>{private}</private>{after}"
    cleaned = redact(text)
    assert private not in cleaned
    assert redact(cleaned) == cleaned
