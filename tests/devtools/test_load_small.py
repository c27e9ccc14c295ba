"""The load promise at small scale: the real plugin (from Node) against a real ``plait serve``.

``plait bench load`` measures 50 sessions x 40 hooks (docs/benchmarks.md); these guard what it
promises with 10 sessions x 10 hooks, in counts only (never wall time): no prompt lost, none
stored twice, every session's prompts in order, through a killed hot tier and a killed service.
"""

from __future__ import annotations

import shutil

import pytest

from plait.devtools.load import LoadOptions, LoadReport, run_load

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="driving the plugin needs node and npm on PATH",
)


def assert_every_prompt_once_in_order(report: LoadReport) -> None:
    assert report.prompts_sent == 10 * 2  # 10 hooks: session.created, then two turns' prompts
    assert report.prompts_lost == 0, report.as_dict()
    assert report.duplicates == 0, report.as_dict()
    assert report.out_of_order_sessions == 0, report.as_dict()
    assert report.outbox_bytes_left == 0 and report.errors == 0


def test_load_through_an_embedded_server_killed_mid_run_loses_no_prompt() -> None:
    options = LoadOptions(sessions=10, hooks=10, outage_s=1, outage_after_s=0.5, pace_ms=100)
    report = run_load(options)
    assert report.redis_killed and report.redis_back_s is not None
    assert report.health["restarts"] >= 1 and report.health["spool_pending"] == 0
    assert_every_prompt_once_in_order(report)


def test_load_through_plait_serve_killed_mid_run_stores_each_call_once() -> None:
    """With the bus events OpenCode publishes besides (message updates, step and tool parts)."""
    options = LoadOptions(
        sessions=10, hooks=10, kill_serve_after_s=0.5, pace_ms=100, bus_events=True
    )
    report = run_load(options)
    assert report.serve_killed
    assert_every_prompt_once_in_order(report)


def test_load_through_a_hung_hot_tier_loses_no_prompt() -> None:
    """The hot tier stops answering (SIGSTOP) without closing a connection, then goes on."""
    options = LoadOptions(sessions=10, hooks=10, hang_s=1.5, outage_after_s=0.5, pace_ms=100)
    report = run_load(options)
    assert report.redis_killed and report.redis_back_s is not None  # it was hung, and resumed
    assert report.health["spool_pending"] == 0
    assert_every_prompt_once_in_order(report)


def test_load_with_the_spool_full_during_an_outage_loses_no_prompt() -> None:
    """A spool that cannot take calls (a full disk, as the service sees it) answers 503: the
    plugins keep the calls and deliver them once the hot tier is back."""
    options = LoadOptions(
        sessions=10, hooks=10, outage_s=1, outage_after_s=0.5, pace_ms=100, spool_max_bytes=4096
    )
    report = run_load(options)
    assert report.redis_killed
    assert_every_prompt_once_in_order(report)


def test_load_over_two_replicas_and_two_workers_with_one_replica_killed() -> None:
    """A shared service: two ``plait serve`` replicas listed in the plugins' ``PLAIT_URL`` and
    two ``plait worker``s on one external Redis. The sessions spread over both replicas; the
    first is killed and stays down a second (its sessions move to the other), then comes back
    on its port: every prompt once, in order, and every drained event in one episode."""
    options = LoadOptions(
        sessions=10, hooks=10, replicas=2, workers=2, kill_serve_after_s=0.5, down_s=1, pace_ms=100
    )
    report = run_load(options)
    assert report.serve_killed
    assert_every_prompt_once_in_order(report)
    assert len(report.answered_by) == 2 and min(report.answered_by) > 0, report.answered_by
    assert report.queue_left == 0 and report.events_drained >= 1, report.as_dict()
    assert report.drained_twice == 0


def test_sessions_starting_at_once_each_get_memory_in_their_first_model_call() -> None:
    """Twenty new sessions back to back: the service is behind with their first turns, so a
    first model call's answer comes before its prompt ran. It asks again while the service is
    behind (``PLAIT_FIRST_CALL_WAIT_MS``, long here: a slow machine counts the same) and every
    session's first model call carries the envelope."""
    report = run_load(LoadOptions(sessions=20, hooks=4, first_call_wait_ms=30_000))
    assert report.transforms == 20
    assert report.first_enveloped == 20, report.as_dict()
    assert report.prompts_lost == 0 and report.duplicates == 0
