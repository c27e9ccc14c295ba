"""Query drift: tokens and Jaccard similarity."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.drift import jaccard, tokenize_query


def test_drift_tokens_are_content_words() -> None:
    assert tokenize_query("Please fix the failing tests in the parser") == {
        "fix",
        "failing",
        "test",
        "parser",
    }
    assert tokenize_query("") == frozenset()
    assert tokenize_query("a an of to") == frozenset()


def test_drift_paths_count_with_their_parts() -> None:
    tokens = tokenize_query("edit src/cache.py now")
    assert {"src/cache.py", "cache", "edit"} <= tokens


def test_drift_inflection_is_not_drift() -> None:
    assert jaccard(tokenize_query("run the tests"), tokenize_query("run test")) == 1.0


def test_drift_jaccard_bounds() -> None:
    a = tokenize_query("add csv export to reports")
    b = tokenize_query("write the deployment docs")
    assert jaccard(a, a) == 1.0
    assert jaccard(a, b) == 0.0
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert 0.0 < jaccard(a, tokenize_query("csv export for invoices")) < 1.0


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_drift_jaccard_is_symmetric_and_bounded(first: str, second: str) -> None:
    a, b = tokenize_query(first), tokenize_query(second)
    assert jaccard(a, b) == jaccard(b, a)
    assert 0.0 <= jaccard(a, b) <= 1.0
