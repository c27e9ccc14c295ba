"""``plait serve`` that the plugin can start, with every hook it takes appended to a file.

Usage: ``python recording_serve.py CALLS_JSONL DATA_DIR --project DIR`` (the plugin appends
``--project DIR``). A real :class:`plait.Memory` (the embedded default) served by
:func:`plait.adapters.hosts.http.serve` on a free loopback port; OpenCode's wire also writes
``{"name", "input", "output"}`` per call to ``CALLS_JSONL`` as the call came.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from plait import Memory
from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.http import serve
from plait.adapters.hosts.opencode.hooks import WIRE
from plait.state.intents import HostCall


def recording(path: Path) -> HostWire:
    """OpenCode's wire, appending each call it reads to ``path``."""

    def call(name: str, payload: Any, call_id: str) -> HostCall:
        line = {"name": name, "input": payload.get("input"), "output": payload.get("output")}
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        return WIRE.call(name, payload, call_id)

    return HostWire(
        adapter=WIRE.adapter, call=call, answer=WIRE.answer, keep_events=WIRE.keep_events
    )


async def run(calls: Path, data_dir: Path, project: Path) -> None:
    async with Memory.open(project, data_dir, start_background=False) as memory:
        await serve(
            memory,
            "127.0.0.1",
            0,
            "",
            data_dir=data_dir,
            project_dir=project,
            opencode=recording(calls),
        )


def main(argv: list[str]) -> None:
    """Parse the arguments and serve until killed."""
    calls, data_dir = Path(argv[0]), Path(argv[1])
    project = Path(argv[argv.index("--project") + 1])
    asyncio.run(run(calls, data_dir, project))


if __name__ == "__main__":
    main(sys.argv[1:])
