"""``plait bench footprint``: real ``plait serve`` processes for several projects, measured."""

from __future__ import annotations

import pytest

from plait.devtools.footprint_bench import render_footprint, run_footprint

pytestmark = pytest.mark.slow


def test_two_projects_share_one_process_and_nothing_runs_after_their_idle_time() -> None:
    report = run_footprint(2, one_process=True, idle_exit_s=15)
    assert report.processes == 3  # one plait serve, the embedded server, its reaper
    assert report.rss_mb["services"] > 0 and report.gone_after_s is not None
    assert "one for every project | 2 | 3 |" in render_footprint([report])
