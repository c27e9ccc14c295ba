"""``<persistent_memory>`` lines: one line per remembered item, each tagged once."""

from __future__ import annotations

from datetime import UTC, datetime

from plait.nodes.recall import render_recall
from plait.state.ports import MemoryHit

WHEN = datetime(2026, 11, 1, tzinfo=UTC)


def hit(uuid: str, kind: str, text: str) -> MemoryHit:
    return MemoryHit(uuid=uuid, kind=kind, text=text, score=1.0, valid_at=WHEN)


def test_an_observation_found_twice_is_one_line_tagged_once() -> None:
    hits = [
        hit("o1", "decision", "[decision] Deploys go to the kiwi-cluster"),
        hit("t9", "decision", "Deploys go to the  kiwi-cluster"),  # the same, as a recall turn
        hit("t2", "rule", "rule: Never commit to main"),
    ]
    text, refs = render_recall(hits, 1000)
    assert text.splitlines() == [
        "- [decision] Deploys go to the kiwi-cluster (since 2026-11-01)",
        "- [rule] Never commit to main (since 2026-11-01)",
    ]
    assert refs == ["o1", "t2"]


def test_different_items_that_share_words_stay_apart() -> None:
    hits = [hit("a", "decision", "Use uv for Python"), hit("b", "decision", "Use uv for scripts")]
    assert len(render_recall(hits, 1000)[0].splitlines()) == 2
