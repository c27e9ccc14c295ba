"""Per-user tokens, the pure part: digests, the verdict for a project, the rate bucket."""

from __future__ import annotations

from datetime import UTC, datetime

from plait.state.tokens import (
    ALL_PROJECTS,
    RateBuckets,
    Verdict,
    judge,
    make_record,
    new_token,
    token_digest,
)


def test_a_token_is_random_prefixed_and_kept_only_as_its_digest() -> None:
    first, second = new_token(), new_token()
    assert first != second and first.startswith("plait_") and len(first) > 40
    record = make_record(first, user="alice", projects=("p1",), rate_per_minute=60)
    assert record.digest == token_digest(first) and first not in record.model_dump_json()


def test_the_verdict_names_unknown_revoked_and_other_projects() -> None:
    token = new_token()
    record = make_record(token, user="alice", projects=("p1",), rate_per_minute=60)
    assert judge([record], token, "p1") == (Verdict.ADMITTED, record)
    assert judge([record], token, "p2") == (Verdict.OTHER_PROJECT, record)
    assert judge([record], new_token(), "p1") == (Verdict.UNKNOWN, None)
    revoked = record.model_copy(update={"revoked_at": datetime.now(UTC)})
    assert judge([revoked], token, "p1") == (Verdict.REVOKED, revoked)
    everywhere = make_record(token, user="bob", projects=(ALL_PROJECTS,), rate_per_minute=60)
    assert judge([everywhere], token, "any-project")[0] is Verdict.ADMITTED


def test_the_rate_bucket_allows_a_burst_then_asks_to_wait_then_refills() -> None:
    record = make_record(new_token(), user="alice", projects=("p1",), rate_per_minute=3)
    buckets = RateBuckets()
    assert [buckets.take(record, now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = buckets.take(record, now=100.0)
    assert 19 < wait <= 20  # one request every 20 s at 3 a minute
    assert buckets.take(record, now=121.0) == 0.0
