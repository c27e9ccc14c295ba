"""Command-hook hosts' calls as the hosts make them: ``plait-hook HOST EVENT`` processes, and
a real ``serve`` on a loopback port (a real Memory over the test's embedded FalkorDB)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from plait import Memory
from plait.adapters.hosts.http.service import read_service_file, serve
from plait.adapters.hosts.http.team import TeamTokens

HOOK = [sys.executable, "-m", "plait.adapters.hosts.hook_client"]


def env_for(data: Path) -> dict[str, str]:
    """The hook's environment: plait's data dir, no inherited service address."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLAIT_URL", "PLAIT_TOKEN")}
    return env | {"PLAIT_DATA_DIR": str(data), "PLAIT_SERVE_COMMAND": "true"}


async def run_hook(
    host: str,
    project: Path,
    data: Path,
    event: str,
    stdin: bytes | dict[str, Any],
    keep: bool = False,
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any], str]:
    """Run ``plait-hook HOST EVENT`` as the host would; exit code, stdout JSON, stderr.

    ``env``: more variables for the hook.
    """
    raw = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    args = [*HOOK, host, event, *(["--keep"] if keep else [])]
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=project,
        env=env_for(data) | (env or {}),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(raw)
    answer = json.loads(out) if out.strip() else {}
    return process.returncode or 0, answer, err.decode()


@asynccontextmanager
async def running(
    tmp_path: Path,
    redis_url: str,
    *,
    background: bool = False,
    tls: tuple[Path, Path] | None = None,
    port: int = 0,
    team: TeamTokens | None = None,
) -> AsyncIterator[Memory]:
    """A real ``serve`` for ``tmp_path/project`` on a loopback port, announced in ``…/data``.

    ``background``: with the drain and the recall caches (a new session's long-term memory).
    ``tls``: certificate and key: the service speaks HTTPS. ``port``: where (0: any free one).
    ``team``: members' tokens admitted beside the owner's.
    """
    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir(exist_ok=True)
    async with Memory.open(
        project,
        data,
        start_background=background,
        redis={"url": redis_url},
        # one group per test folder: a second service of the same test sees the same memory
        graphiti={"group_id_prefix": f"t{uuid.uuid5(uuid.NAMESPACE_URL, str(tmp_path)).hex[:10]}"},
    ) as memory:
        task = asyncio.create_task(
            serve(memory, port=port, data_dir=data, project_dir=project, tls=tls, team=team)
        )
        for _ in range(200):
            if read_service_file(data, project) is not None:
                break
            await asyncio.sleep(0.05)
        try:
            yield memory
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


__all__ = ["env_for", "run_hook", "running"]
