"""Redaction against a corpus of real-world secret shapes and of look-alikes that must survive.

``tests/data/secrets.jsonl``: one case a line, ``kind`` ``secret`` (with the ``secrets`` that must
not survive ``redact``) or ``lookalike`` (whose text must come back unchanged). Values are fake,
with the structure of the real ones, most of them inside realistic context (.env files, shell
history, JSON configs, stack traces, URLs, file paths, docker commands).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plait.state.base.redact import REDACTED, redact, redact_secrets, strip_private

CORPUS = Path(__file__).parents[2] / "data" / "secrets.jsonl"
CASES: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text().splitlines()]
SECRETS = [case for case in CASES if case["kind"] == "secret"]
LOOKALIKES = [case for case in CASES if case["kind"] == "lookalike"]
MAX_FALSE_POSITIVE_RATE = 0.02


def test_corpus_has_enough_distinct_shapes() -> None:
    assert len({case["shape"] for case in SECRETS}) >= 40
    assert len({case["shape"] for case in LOOKALIKES}) >= 40
    assert all(secret in case["text"] for case in SECRETS for secret in case["secrets"])


def test_corpus_no_secret_survives_and_lookalikes_do(
    record_property: Callable[[str, object], None],
) -> None:
    survived = [
        (case["shape"], secret)
        for case in SECRETS
        for secret in case["secrets"]
        if secret in redact(case["text"])
    ]
    changed = [case["shape"] for case in LOOKALIKES if redact(case["text"]) != case["text"]]
    total = sum(len(case["secrets"]) for case in SECRETS)
    record_property("secrets_caught", f"{total - len(survived)}/{total}")
    record_property("false_positives", f"{len(changed)}/{len(LOOKALIKES)}")
    print(
        f"\nredaction corpus: secrets caught {total - len(survived)}/{total} "
        f"({len(SECRETS)} shapes); false positives {len(changed)}/{len(LOOKALIKES)} look-alikes"
    )
    assert survived == []
    assert len(changed) / len(LOOKALIKES) <= MAX_FALSE_POSITIVE_RATE, changed


@pytest.mark.parametrize("case", SECRETS, ids=[case["shape"] for case in SECRETS])
def test_corpus_secret_is_redacted(case: dict[str, Any]) -> None:
    cleaned = redact(case["text"])
    assert REDACTED in cleaned
    assert [secret for secret in case["secrets"] if secret in cleaned] == []
    assert redact(cleaned) == cleaned


@pytest.mark.parametrize("case", LOOKALIKES, ids=[case["shape"] for case in LOOKALIKES])
def test_corpus_lookalike_survives(case: dict[str, Any]) -> None:
    assert redact(case["text"]) == case["text"]


# -- properties -----------------------------------------------------------------------------------
# Fragments that wake every rule up, glued with arbitrary text (lone surrogates and NUL included).
FRAGMENTS = [
    "password=",
    "DB_PASS=",
    '"api_key": "',
    "token: ",
    "Authorization: Bearer ",
    "Cookie: a=",
    "?sig=",
    "&code=",
    "://u:",
    "@host/",
    " -p",
    " --password ",
    " -u a:",
    "mysql ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "Private-Lines: 3",
    "<private>",
    "</private>",
    "<PRIVATE reason='x'>",
    "<priv",
    "ate>",
    "sk-proj-",
    "ghp_",
    "AKIA",
    "eyJhbGciOi.eyJzdWIiOi.",
    "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY",
    "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ",
    "\n",
    " ",
    '\\"',
    "'",
    "[REDACTED]",
    "machine h login u password ",
    "IDENTIFIED BY '",
]
# Any code point, lone surrogates too (``st.characters`` leaves them out).
ANY_CHARACTER = st.characters() | st.integers(0xD800, 0xDFFF).map(chr)
ANY_TEXT = st.text(alphabet=ANY_CHARACTER, max_size=40)
GLUED = st.lists(st.sampled_from(FRAGMENTS) | ANY_TEXT, max_size=24).map("".join)
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(GLUED)
def test_redact_is_idempotent_on_glued_fragments(text: str) -> None:
    cleaned = redact(text)
    assert isinstance(cleaned, str)
    assert redact(cleaned) == cleaned


@PROPERTY_SETTINGS
@given(st.text(alphabet=ANY_CHARACTER, max_size=400))
def test_redact_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    cleaned = redact(text)
    assert redact(cleaned) == cleaned
    assert strip_private(strip_private(text)) == strip_private(text)
    assert redact_secrets(redact_secrets(text)) == redact_secrets(text)


@PROPERTY_SETTINGS
@given(GLUED, GLUED)
def test_redact_hides_private_spans_anywhere(before: str, after: str) -> None:
    marker = "zq-private-marker-zq"
    assert marker not in redact(f"{before}<private>{marker}</private>{after}")


@PROPERTY_SETTINGS
@given(ANY_TEXT, st.sampled_from([case for case in SECRETS if len(case["secrets"]) == 1]))
def test_redact_finds_a_secret_whatever_surrounds_it(noise: str, case: dict[str, Any]) -> None:
    secret = case["secrets"][0]
    assert secret not in redact(f"{noise}\n{case['text']}\n{noise}")


# -- bounded time ---------------------------------------------------------------------------------
PATHOLOGICAL = {
    "private_opens": "<private " * 40_000,
    "private_nesting": "<priv<private>x</private>ate>" * 10_000,
    "pem_headers": "-----BEGIN RSA PRIVATE KEY-----\n" * 10_000,
    "assignments": "password=" * 40_000,
    "keywords": "passtokensecretkeyauth" * 20_000,
    "url_schemes": "://a:" * 60_000,
    "flags": " -p -u a:b --password" * 20_000,
    "one_long_token": "Ab3" * 300_000,
    "many_tokens": "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY " * 20_000,
    "colons_and_quotes": ':"' * 200_000,
    "surrogates": "\udcff\ud800" * 200_000,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_redact_takes_bounded_time_on_pathological_input(text: str) -> None:
    started = time.perf_counter()
    cleaned = redact(text)
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0, f"{len(text)} chars took {elapsed:.2f}s"
    assert redact(cleaned) == cleaned
