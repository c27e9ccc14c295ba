"""``plait ui``: starts the project's service when none runs and prints a login link that works
once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
from support.plait_cli import PLAIT, plait_env, run_plait


def test_plait_ui_starts_the_service_and_prints_a_one_time_link(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = plait_env(tmp_path / "data", XDG_CONFIG_HOME=str(tmp_path))
    try:
        done = run_plait(env, "ui", "--no-open", "--project", str(project))
        assert done.returncode == 0, done.stderr
        link = done.stdout.split("plait viewer: ", 1)[1].split()[0]
        with httpx.Client() as browser:
            assert browser.get(link).status_code == 303
            assert browser.get(link.replace("/login?", "/sessions?")).status_code == 200
            assert browser.get(link).status_code == 403
    finally:
        subprocess.run(
            [PLAIT, "stop", "--project", str(project)], env=env, capture_output=True, timeout=60
        )
