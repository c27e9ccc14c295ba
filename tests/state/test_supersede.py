"""Decision subjects and supersession: a later decision replaces an earlier one only on evidence."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.statements import promoted, statements
from plait.state.supersede import (
    PAIR_WEIGHTS,
    PairModel,
    chosen,
    decision_subject,
    has_reversal_cue,
    pair_model,
    rejected_choices,
    ruled,
    supersedes,
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Rate limiting: we'll use a token bucket with a burst of 20.",
            "Actually, let's not use a token bucket after all: use a sliding window log",
        ),
        ("Use Redis for the cache.", "Switch the cache to Memcached."),
        ("We'll use requests for HTTP calls.", "Use httpx instead of requests."),
        ("Let's deploy to Heroku.", "Change of plan: we deploy to Fly.io, not Heroku."),
        ("We'll write the CLI in Go.", "Actually, let's write the CLI in Rust."),
        (
            "I'll use requests for the client.",
            "I'll switch the client to httpx since we need async.",
        ),
        ("Store config in YAML.", "Not YAML after all - TOML for config."),
        ("Use argparse for the CLI.", "Switch the CLI from argparse to Typer."),
        ("Cache API responses for 10 minutes.", "Actually cache API responses for 30 seconds."),
    ],
)
def test_supersedes_a_reversal_of_the_same_subject(old: str, new: str) -> None:
    assert supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Decision: store sessions in Redis.", "Decision: use argon2 for password hashing."),
        ("We'll use httpx for the HTTP client.", "Actually, let's use structlog for logging."),
        ("Rate limiting: token bucket.", "Switch the queue to RabbitMQ."),
        ("Let's use Vite for bundling.", "Actually, use pnpm instead of npm."),
        (
            "We'll use Postgres for the main database.",
            "Actually, store the uploaded files in S3 instead of the database.",
        ),
    ],
)
def test_supersedes_not_across_different_subjects(old: str, new: str) -> None:
    assert not supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Use Redis for the cache.", "Set a 5 minute TTL on the Redis cache."),
        (
            "Use Postgres for the main database.",
            "Actually, use Postgres 16 specifically for the main database.",
        ),
        (
            "Use Postgres for persistence.",
            "Instead of raw SQL strings, use SQLAlchemy Core with Postgres.",
        ),
        ("Use JWT for auth.", "Also, JWT access tokens expire after 15 minutes."),
    ],
)
def test_supersedes_not_when_the_new_one_only_adds_detail(old: str, new: str) -> None:
    assert not supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The mobile app is built with React Native.", "We're building the mobile app in Flutter."),
        ("Log retention is 90 days.", "Keep logs for 30 days."),
        ("HTTP client retries: 3.", "Let's do 5 retries on the HTTP client."),
        ("User profiles live in Postgres.", "Put user profiles in DynamoDB, keyed by tenant id."),
        (
            "Use Kafka for the event stream.",
            "Kafka was way too heavy; the event stream runs on NATS.",
        ),
        ("switch the next.js build to turbopack", "undo the switch to turbopack, loaders break"),
        # short decisions sharing one word of their subject
        ("Use Redis for the cache.", "The caching layer will be Memcached."),
        ("Use Sentry for error tracking.", "Errors are reported to Rollbar."),
        # a choice in plain words, not a name
        ("Store user uploads on the local disk.", "Let's put user uploads in S3."),
    ],
)
def test_supersedes_a_replacement_said_without_a_cue_word(old: str, new: str) -> None:
    assert supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Use Jest for the frontend tests.", "Use pytest for the backend tests."),
        ("The request timeout is 30s.", "The session timeout is 30 minutes."),
        ("we deploy on kubernetes", "the cluster moved to k8s 1.30, nothing else changes"),
        ("The mobile app targets iOS 16.", "The mobile app uses Kotlin for Android."),
        ("Use Redis for the cache.", "Redis for the cache, with Postgres as the source of truth."),
        ("Use Redis on port 6379 for dev.", "Use Postgres on port 5432 for dev."),
        # another platform
        ("The iOS app uses SwiftUI.", "The Android app uses Jetpack Compose."),
        # one name spelt two ways, with a version
        ("we'll go with Next.js for the marketing site", "next 14 for the marketing site"),
        # two things done with the same subject
        (
            "We decided to host the docs on the quoll server.",
            "We decided to build the docs with mkdocs.",
        ),
    ],
)
def test_supersedes_not_another_setting_or_a_complement_without_a_cue(old: str, new: str) -> None:
    assert not supersedes(old, new)


def test_supersedes_not_itself_nor_empty_text() -> None:
    assert not supersedes("Use Redis instead.", "use redis instead")
    assert not supersedes("", "Actually, use Redis instead of Memcached.")


def test_supersedes_takes_statements_as_well_as_text() -> None:
    [old] = promoted(statements("Decision: store sessions in Redis."))
    [new] = promoted(statements("Decision: store sessions in Postgres instead."))
    assert supersedes(old, new)
    assert supersedes(old.text, new)


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Decision: store sessions in Redis.", "sessions"),
        ("Decision: use argon2 for password hashing", "password hashing"),
        ("Use Redis for the cache.", "cache"),
        ("Rate limiting: we'll use a token bucket.", "rate limiting"),
        ("We'll use httpx.", "http client"),
        ("Switch to aiohttp.", "http client"),
        ("Switch logging to JSON lines.", "logging"),
    ],
)
def test_decision_subject_is_what_the_decision_is_about(text: str, subject: str) -> None:
    assert decision_subject(text) == subject


def test_decision_subject_is_never_the_marker() -> None:
    for text in ("Decision: ship on Fridays only", "Decision:", "decision: decision"):
        assert decision_subject(text) != "decision"


@pytest.mark.parametrize(
    ("text", "rejected"),
    [
        ("use httpx instead of requests", ("requests",)),
        ("use pnpm, not npm", ("npm",)),
        ("We no longer use Celery; jobs run in-process.", ("celery",)),
        ("Stop using the mock server.", ("mock server",)),
        ("Switch the queue from RabbitMQ to Redis Streams.", ("rabbitmq",)),
        ("GraphQL is out, REST only.", ("graphql",)),
        ("ok forget Docker for dev", ("docker",)),
        ("never mind the docs, focus on the bug", ()),
        ("use ruff", ()),
    ],
)
def test_rejected_choices(text: str, rejected: tuple[str, ...]) -> None:
    assert rejected_choices(text) == rejected


def test_chosen_leaves_out_what_is_rejected() -> None:
    assert chosen("Use Redis instead of Memcached for the session store") == ("redis",)
    assert chosen("Stop using the deprecated datetime.utcnow()") == ()


def test_has_reversal_cue() -> None:
    assert has_reversal_cue("Change of plan: Postgres.")
    assert has_reversal_cue("Let's move the tests to pytest instead.")
    assert not has_reversal_cue("Let's stick with unittest for now, migrating to pytest later.")


def test_supersede_imports_only_the_standard_library_and_the_stemmer() -> None:
    source = Path(__file__).parents[2] / "state" / "supersede.py"
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    allowed = {
        "__future__",
        "collections.abc",
        "dataclasses",
        "functools",
        "json",
        "math",
        "re",
        "typing",
        "plait.state.base.shipped",  # the standard library's importlib.resources alone
        "plait.state.words",
    }
    assert imported <= allowed


def test_supersedes_costs_bounded_time_on_huge_text() -> None:
    huge = "use redis instead of memcached for the cache " * 200_000
    started = time.perf_counter()
    supersedes(huge, huge[::-1])
    decision_subject(huge)
    assert time.perf_counter() - started < 0.5


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_supersedes_never_raises_and_is_false_for_the_same_text(old: str, new: str) -> None:
    supersedes(old, new)
    assert not supersedes(new, new)
    assert isinstance(decision_subject(new), str)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "For the job queue we'll use Redis.",
            "Let's lean on Postgres rather than bringing in Redis.",
        ),
        ("Log with the stdlib logging module.", "Switch our logging over to structlog."),
        ("Use a session-scoped fixture for the DB.", "I'll switch the fixture to function scope."),
        ("Timeouts: 5s connect, 30s read.", "Timeouts: 10s connect, 30s read."),
        ("We'll use Python 3.11.", "We're standardizing on Python 3.12 across services."),
    ],
)
def test_supersedes_new_evidence_forms(old: str, new: str) -> None:
    assert supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Retries: 3 for reads.", "Retries: 5 for writes."),
        ("Use Postgres for the main database.", "Use Postgres 16 for the main database."),
        ("Use Redis with a 10 minute TTL.", "Use Redis with 3 replicas."),
    ],
)
def test_supersedes_other_numbers_are_not_a_reversal_by_themselves(old: str, new: str) -> None:
    assert not supersedes(old, new)


def test_supersedes_a_digit_inside_a_name_is_no_version() -> None:
    assert not supersedes("use tool0 for job0", "use tool8 for job8")
    assert supersedes("Use Postgres 15.", "Go with Postgres 16 for everything.")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # "go" the verb is no choice of language ("go over", "go with")
        ("Nightly backups go over SFTP.", "Nightly backups go over S3 only."),
        # a choice spoken against in other words: replaces, kept failing, fell short, a headache
        ("Use Redux for the app state.", "Zustand replaces Redux for the app state."),
        ("Use Cypress for the e2e tests.", "Back to Selenium, Cypress kept flaking on CI."),
        ("Host the API on Heroku.", "Heroku's been a headache; the API goes on Render."),
        ("Use SOAP for the partner API.", "The partner API is REST; SOAP didn't survive review."),
        ("Report exports are written as XML.", "Report exports: JSON, XML was eating the disk."),
        ("Jobs run on Celery.", "Celery turned out to be a pain; jobs run on RQ."),
        ("Plots use Matplotlib.", "Plots are drawn with Plotly; Matplotlib felt clunky."),
        # "give" and "bump" are verbs, not what the decision is about
        ("The worker pool size for imports is 4.", "Give imports 16 workers in its pool."),
        # mail, search and plotting libraries are choices of one kind each
        ("Password reset mail goes through Mailgun.", "Resend handles password reset mail now."),
        ("Product search runs on Elasticsearch.", "Meilisearch serves product search now."),
    ],
)
def test_supersedes_fresh16_wordings(old: str, new: str) -> None:
    assert supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We write the CLI in Go.", "Go with cobra for the CLI's flags."),
        ("Use Redis for the cache.", "Redis keeps the sessions too, it was never a pain."),
        ("Exports are written as XML.", "Imports: JSON, the partner sends it."),
    ],
)
def test_supersedes_not_for_those_words_alone(old: str, new: str) -> None:
    assert not supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Weight decay 0.1 for all runs.", "weight decay -> 0.05 everywhere from here on"),
        ("The arm's joint controllers run at 500 Hz.", "Joint control loop on the arm: 1 kHz."),
        (
            "We'll support LTI 1.1 and LTI 1.3 for external tools.",
            "External tools connect over LTI 1.3, nothing else.",
        ),
    ],
)
def test_the_pair_model_finds_a_replacement_the_rules_have_no_evidence_on(
    old: str, new: str
) -> None:
    assert ruled(old, new, ()) is None  # no form of the rules speaks either way
    assert supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Daily quests refresh every 24 hours.", "Shop offers rotate every 8 hours."),
        ("Cache product pages in Varnish.", "Seller analytics get cached in Redis for an hour."),
        (
            "The brake controller's main loop runs at 1 kHz.",
            "The seat heater controller polls its temperature sensor at 10 Hz.",
        ),
        (
            "Sessions in the web dashboard expire after 15 minutes.",
            "Swap quotes expire after 30 seconds.",
        ),
    ],
)
def test_the_pair_model_keeps_decisions_about_other_things(old: str, new: str) -> None:
    assert ruled(old, new, ()) is None
    assert not supersedes(old, new)


def test_the_pair_model_never_overrules_the_rules_evidence_that_a_decision_stays() -> None:
    old, new = (
        "Use Postgres for the main database.",
        "Actually, use Postgres 16 for the main database.",
    )
    assert ruled(old, new, ()) is False  # the old choice is kept
    assert pair_model() is not None
    assert pair_model().probability(old, new) >= pair_model().threshold
    assert not supersedes(old, new)


def test_the_models_decision_needs_a_cue_against_the_users_decision() -> None:
    old, new = "Weight decay 0.1 for all runs.", "weight decay -> 0.05 everywhere from here on"
    assert supersedes(old, new)
    assert not supersedes(old, new, cue=True)  # the model's own decision may only be proposing


def test_the_pair_model_file_is_read_back_and_refuses_other_features() -> None:
    model = pair_model()
    assert model is not None
    assert PairModel.from_json(model.to_json()) == model
    shipped = Path(__file__).parents[2] / "state" / PAIR_WEIGHTS
    assert PairModel.from_json(shipped.read_text()) == model
    stale = model.to_json().replace('"reversal cue"', '"a feature since removed"')
    with pytest.raises(ValueError, match="retrain"):
        PairModel.from_json(stale)
