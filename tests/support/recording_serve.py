"""A stand-in for ``plait serve`` that the plugin can start: it appends every hook to a file.

Usage: ``python recording_serve.py CALLS_JSONL DATA_DIR --project DIR`` (the plugin appends
``--project DIR``). Serves :func:`plait.adapters.hosts.http.serve` on a free loopback port.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from plait.adapters.hosts.http import serve


class FileRecordingRunner:
    """Appends ``{"name", "input", "output"}`` per hook to a JSONL file; output unchanged."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def hook(self, name: str, input: dict[str, Any], output: dict[str, Any]) -> dict:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"name": name, "input": input, "output": output}) + "\n")
        return output


def main(argv: list[str]) -> None:
    """Parse the arguments and serve until killed."""
    calls, data_dir = Path(argv[0]), Path(argv[1])
    project = Path(argv[argv.index("--project") + 1])
    runner = FileRecordingRunner(calls)
    asyncio.run(serve(runner, "127.0.0.1", 0, "", data_dir=data_dir, project_dir=project))


if __name__ == "__main__":
    main(sys.argv[1:])
