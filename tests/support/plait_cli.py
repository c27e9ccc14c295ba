"""The ``plait`` command as a test runs it: to its end, or a ``plait serve`` left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plait.adapters.hosts.http import ServiceInfo, service_file

PLAIT = str(Path(sys.executable).parent / "plait")


def plait_env(data_dir: Path, **more: str) -> dict[str, str]:
    """This environment without its ``PLAIT_`` variables, with plait's data in ``data_dir``.

    ``more``: variables set on top (``PLAIT_REDIS__URL=...``).
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    return {**clean, "PLAIT_DATA_DIR": str(data_dir), **more}


def invoke_plait(*arguments: str) -> str:
    """``plait ARGUMENTS`` in this process (typer's runner): its output; it must succeed."""
    from typer.testing import CliRunner

    from plait.cli import app

    result = CliRunner().invoke(app, list(arguments))
    assert result.exit_code == 0, result.output
    return result.output


def run_plait(
    env: dict[str, str], *arguments: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``plait ARGUMENTS`` to its end, its output as text."""
    return subprocess.run(
        [PLAIT, *arguments], env=env, capture_output=True, text=True, timeout=timeout
    )


def service_info(project: Path, port: int = 1) -> ServiceInfo:
    """What a service announces for ``project``, on a loopback ``port``, from this process."""
    url = f"http://127.0.0.1:{port}"
    return ServiceInfo(
        url=url, host="127.0.0.1", port=port, pid=os.getpid(), project_dir=str(project)
    )


def start_serve(
    project: Path, env: dict[str, str], *options: str, seconds: float = 60
) -> tuple[subprocess.Popen[str], str]:
    """``plait serve --project PROJECT OPTIONS``: the process and its URL once it wrote a new one.

    A service that exits first fails the test with its stderr (kept in a file: a pipe nobody
    reads would stop a chatty service); one that stays silent is killed.
    """
    path = service_file(Path(env["PLAIT_DATA_DIR"]), project)
    before = path.read_text() if path.exists() else ""
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(
            [PLAIT, "serve", "--project", str(project), *options],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and process.poll() is None:
            text = path.read_text() if path.exists() else ""
            if text not in ("", before):
                return process, json.loads(text)["url"]
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
            process.wait()
            raise AssertionError("plait serve did not start")
        errors.seek(0)
        raise AssertionError(f"plait serve exited: {errors.read()}")


__all__ = ["PLAIT", "invoke_plait", "plait_env", "run_plait", "service_info", "start_serve"]
