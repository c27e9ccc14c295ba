"""``plait bench size``: sessions played into a fresh embedded server, sized by key kind."""

from __future__ import annotations

from plait.devtools.size_bench import render_size, run_size_bench


async def test_the_sessions_fill_the_queue_and_the_drain_empties_it() -> None:
    report = await run_size_bench(sessions=2, turns=3)
    assert report.hooks > 2 * 3 * 4 and report.events > 2 * 3
    assert report.keys["events"] == 2  # one event log per session
    assert report.by_kind["drain queue"] > report.drained_by_kind["drain queue"]
    assert report.after_bytes > report.before_bytes
    assert "2 sessions × 3 turns" in render_size(report)
