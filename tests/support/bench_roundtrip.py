"""Benchmark: plugin-to-service round trip (chat.message + messages.transform), p99 target 10 ms.

Usage: ``uv run python tests/support/bench_roundtrip.py [N]``. Starts plait's service
in-process on 127.0.0.1 (the real ``plait.Memory`` on an embedded FalkorDB) and
drives the real plugin under Bun (the Bun inside OpenCode's binary, via ``BUN_BE_BUN=1``).
Not a test: wall time is reported, never asserted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from hosts.opencode.test_opencode_e2e import PlaitService, opencode_cache_dir  # noqa: E402

from plait.memory import Memory  # noqa: E402

PLUGIN = HERE.parent.parent / "adapters" / "hosts" / "opencode" / "plait.ts"


def bun() -> list[str]:
    """The Bun runtime inside the pinned OpenCode binary."""
    return [str(opencode_cache_dir() / "node_modules" / ".bin" / "opencode")]


def main() -> None:
    """Run the benchmark and print the JSON result."""
    count = next((arg for arg in sys.argv[1:] if arg.isdigit()), "500")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        data_dir = root / "data"

        async def make() -> Memory:
            return await Memory.open(project_dir=root, data_dir=data_dir)

        service = PlaitService(make, data_dir, root).start()
        try:
            env = dict(os.environ, BUN_BE_BUN="1", PLAIT_URL=service.url())
            env.update(PLAIT_TOKEN=service.token, PLAIT_NO_SPAWN="1", PLAIT_DATA_DIR=str(data_dir))
            script = str(HERE / "bench_roundtrip.ts")
            result = subprocess.run(
                [*bun(), "run", script, str(PLUGIN), count],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        finally:
            service.stop()
        line = (result.stdout.strip().splitlines() or [result.stderr])[-1]
        print(json.dumps({"runner": "memory", **json.loads(line)}))


if __name__ == "__main__":
    asyncio.run(asyncio.sleep(0))
    main()
