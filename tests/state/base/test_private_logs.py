"""Logs carry no secret: plait's loggers redact their records, plait's commands all of stderr."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from plait.state.base.boundary import fail_open
from plait.state.base.redact import redacted_logger

SECRET = "ghp_b6s7U7bm8ZaDdIzPLzyibXQknMzAA98DyAJ1"


@pytest.mark.parametrize("name", ["plait", "plait.mcp"])
def test_plait_loggers_redact_messages_arguments_and_tracebacks(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    logger = redacted_logger(name)
    with caplog.at_level(logging.INFO, logger=name):
        logger.warning("cloning https://%s@github.com/acme/x.git", SECRET)
        try:
            raise RuntimeError(f"DB_PASS=hunter2hunter2 and {SECRET}")
        except RuntimeError:
            logger.exception("it broke")
    assert caplog.records and SECRET not in caplog.text and "hunter2hunter2" not in caplog.text
    assert all(record.exc_info is None for record in caplog.records)


async def test_fail_open_reason_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    async def broken() -> None:
        raise ConnectionError(f"redis://:{SECRET}@127.0.0.1:6379 refused")

    with caplog.at_level(logging.WARNING, logger="plait"):
        await fail_open("a test", broken(), None)
    assert "a test failed open" in caplog.text and SECRET not in caplog.text


def test_plait_commands_redact_every_library_log_and_a_crash() -> None:
    script = (
        "import logging\n"
        "from plait.state.base.redact import redact_process_output\n"
        "redact_process_output()\n"
        f"logging.getLogger('httpx').warning('GET https://user:{SECRET}@example.com/')\n"
        "raise RuntimeError('export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert "GET https://user:" in done.stderr and "RuntimeError" in done.stderr
    assert SECRET not in done.stderr and "wJalrXUtnFEMI" not in done.stderr
