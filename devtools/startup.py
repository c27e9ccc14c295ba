"""``plait bench startup``: how fast plait's processes start, each timed in a fresh process.

Bare ``python -c pass`` is the yardstick. Measured: ``plait --help`` and every command's
``--help``; ``plait mcp`` until it answers ``initialize`` and ``tools/list``; ``plait serve``
until its health check answers; ``Memory.open`` with the embedded server already up; the
bytes of plait's tool schemas as OpenCode sends them; and (``--opencode``) a real
``opencode run`` turn with and without plait against the local mock provider, interleaved.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.state.base.settings import DEFAULT_TOOL_GROUPS

PYTHON = sys.executable
PLAIT = str(Path(sys.executable).parent / "plait")


@dataclass(frozen=True, kw_only=True)
class Figure:
    """Seconds a thing took over several rounds."""

    name: str
    samples: list[float]
    note: str = ""

    @property
    def median(self) -> float:
        """The median in seconds."""
        return statistics.median(self.samples)

    def row(self, bare: float | None = None) -> str:
        """A markdown table row: median, max and, against bare Python, the ratio."""
        ratio = f"{self.median / bare:.1f}×" if bare else ""
        return (
            f"| {self.name} | {len(self.samples)} | {self.median * 1000:.0f} | "
            f"{max(self.samples) * 1000:.0f} | {ratio} | {self.note} |"
        )


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without plait's variables, plus ``extra``.

    ``PYTHONDONTWRITEBYTECODE`` is dropped: a person's Python caches compiled modules, so a
    process measured after a first run starts from bytecode, as theirs does.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PLAIT_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(extra)
    return env


def time_command(command: list[str], rounds: int, env: dict[str, str] | None = None) -> list[float]:
    """Wall seconds of a command run to its end, once per round, after one unmeasured run."""
    subprocess.run(command, env=env or clean_env(), capture_output=True, check=False)
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, env=env or clean_env(), capture_output=True, check=False)
        samples.append(time.perf_counter() - started)
    return samples


def help_commands(app: Any) -> list[list[str]]:
    """``--help`` of plait and of each of its commands and sub-commands (``app``: the CLI)."""
    from typer.main import get_command

    root = get_command(app)
    found: list[list[str]] = [["--help"]]

    def walk(group: Any, path: list[str]) -> None:
        for name, command in sorted(getattr(group, "commands", {}).items()):
            found.append([*path, name, "--help"])
            walk(command, [*path, name])

    walk(root, [])
    return found


def bench_help(app: Any, rounds: int, env: dict[str, str]) -> list[Figure]:
    """``plait --help`` and every command's ``--help``."""
    return [
        Figure(name=f"`plait {' '.join(args)}`", samples=time_command([PLAIT, *args], rounds, env))
        for args in help_commands(app)
    ]


def rpc(process: subprocess.Popen[bytes], request_id: int, method: str, params: Any) -> Any:
    """One JSON-RPC request over a process's stdio; its answer."""
    assert process.stdin is not None and process.stdout is not None
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def bench_mcp(rounds: int, project: Path, env: dict[str, str]) -> tuple[Figure, Figure]:
    """``plait mcp``: process start to the ``initialize`` answer, and to ``tools/list``'s."""
    initialized, listed = [], []
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b"}}
    for _ in range(rounds + 1):  # the first run (it writes the bytecode cache) is dropped
        started = time.perf_counter()
        process = subprocess.Popen(
            [PLAIT, "mcp", "--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        rpc(process, 1, "initialize", hello)
        initialized.append(time.perf_counter() - started)
        rpc(process, 2, "tools/list", {})
        listed.append(time.perf_counter() - started)
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)
    return (
        Figure(name="`plait mcp` → `initialize` answered", samples=initialized[1:]),
        Figure(name="`plait mcp` → `tools/list` answered", samples=listed[1:]),
    )


def wait_healthy(data_dir: Path, project: Path, timeout: float = 60) -> None:
    """Until the project's service answers its health check."""
    from plait.adapters.hosts.http import service_file

    path = service_file(data_dir, project)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            url = json.loads(path.read_text())["url"]
            with urllib.request.urlopen(f"{url}/v1/health", timeout=0.5) as answer:
                if answer.status == 200:
                    return
        except (OSError, ValueError, KeyError):
            time.sleep(0.01)
    raise TimeoutError("plait serve did not come up")


def bench_serve(rounds: int, project: Path, data_dir: Path, env: dict[str, str]) -> Figure:
    """``plait serve``: process start until the health check answers (then SIGTERM)."""
    samples = []
    for _ in range(rounds + 1):  # the first run (bytecode cache) is dropped
        started = time.perf_counter()
        process = subprocess.Popen(
            [PLAIT, "serve", "--project", str(project)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_healthy(data_dir, project)
        samples.append(time.perf_counter() - started)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    return Figure(name="`plait serve` → health answered", samples=samples[1:])


MEMORY_OPEN = """
import asyncio, sys, time
from plait.memory import Memory
async def main():
    started = time.perf_counter()
    memory = await Memory.open(sys.argv[1], sys.argv[2], start_background=False)
    print(time.perf_counter() - started)
    await memory.aclose()
asyncio.run(main())
"""


def bench_memory_open(rounds: int, project: Path, data_dir: Path) -> tuple[Figure, Figure]:
    """``Memory.open`` in a fresh process while the embedded server is already up.

    The first figure is the call alone (``plait.memory`` imported before); the second the
    whole process (Python, the imports, the call).
    """
    from plait.adapters.backends.embedded import EmbeddedFalkorDB

    calls, processes = [], []
    with EmbeddedFalkorDB(data_dir):
        for _ in range(rounds + 1):  # the first run (bytecode cache) is dropped
            started = time.perf_counter()
            done = subprocess.run(
                [PYTHON, "-c", MEMORY_OPEN, str(project), str(data_dir)],  # warm: see clean_env
                capture_output=True,
                text=True,
                check=True,
                env=clean_env(),
            )  # (no PYTHONDONTWRITEBYTECODE: see clean_env)
            processes.append(time.perf_counter() - started)
            calls.append(float(done.stdout.strip().splitlines()[-1]))
    return (
        Figure(name="`Memory.open` (server up), the call", samples=calls[1:]),
        Figure(name="`Memory.open` (server up), process with imports", samples=processes[1:]),
    )


def schema_bytes(groups: tuple[str, ...] | None = None) -> int:
    """Bytes of plait's tool schemas as OpenCode puts them into each request (compact JSON)."""
    from plait.adapters.hosts.mcp import catalog

    specs = catalog.TOOLS if groups is None else catalog.enabled_tools(groups)
    wrapped = [
        {
            "type": "function",
            "function": {
                "name": f"plait_{spec.name}",
                "description": spec.description,
                "parameters": {**spec.listing()["inputSchema"], "additionalProperties": False},
            },
        }
        for spec in specs
    ]
    return len(json.dumps(wrapped, separators=(",", ":")))


# -- real OpenCode ----------------------------------------------------------------------------
OPENCODE_VERSION = "1.18.33"


def opencode_cache() -> Path:
    """Where the tests install OpenCode (``PLAIT_TEST_CACHE`` moves it)."""
    base = os.environ.get("PLAIT_TEST_CACHE") or Path.home() / ".cache" / "plait-tests"
    return Path(base) / "opencode" / OPENCODE_VERSION


def opencode_binary() -> Path | None:
    """The pinned ``opencode`` the e2e tests installed, if it is there."""
    binary = opencode_cache() / "node_modules" / ".bin" / "opencode"
    return binary if binary.exists() else None


@dataclass
class OpenCodeProject:
    """A temporary project wired to the mock provider, with or without plait."""

    root: Path
    home: Path
    data_dir: Path
    base_url: str

    def env(self) -> dict[str, str]:
        """OpenCode's environment: its own home, no updates, plait's data dir."""
        env = opencode_env(self.root, self.home, self.data_dir)
        env["PATH"] = f"{Path(PLAIT).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        return env


def opencode_env(root: Path, home: Path, data_dir: Path) -> dict[str, str]:
    """This process's environment for an OpenCode run in ``root``, kept apart from the user's.

    No ``PLAIT_``, ``OPENCODE_`` or ``XDG_`` variable of the caller leaks in; OpenCode gets its own
    home, fetches and updates nothing, and plait keeps its data in ``data_dir``.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "OPENCODE_", "XDG_"))}
    env.update(
        PWD=str(root),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(opencode_cache() / "xdg-cache"),
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
        OPENCODE_DISABLE_SHARE="1",
        PLAIT_DATA_DIR=str(data_dir),
    )
    return env


def make_opencode_project(base: Path, name: str, base_url: str, *, plait: bool) -> OpenCodeProject:
    """A git project whose opencode.json names the mock provider; plait installed if asked."""
    root = base / name / "project"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    model = {"name": "Mock", "limit": {"context": 100_000, "output": 4096}}
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Mock",
        "options": {"baseURL": base_url, "apiKey": "bench"},
        "models": {"mock-model": model},
    }
    config = {
        "autoupdate": False,
        "share": "disabled",
        "snapshot": False,
        "provider": {"mock": provider},
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
    }
    (root / "opencode.json").write_text(json.dumps(config, indent=2))
    project = OpenCodeProject(root, base / name / "home", base / name / "data", base_url)
    if plait:
        env = project.env()
        subprocess.run(
            [PLAIT, "opencode", "install"], cwd=root, env=env, check=True, capture_output=True
        )
    return project


def opencode_run(binary: Path, project: OpenCodeProject, message: str) -> float:
    """One ``opencode run`` turn; its wall seconds."""
    command = [str(binary), "run", "--dir", str(project.root), "-m", "mock/mock-model", message]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=project.root, env=project.env(), capture_output=True, text=True, timeout=180
    )
    if done.returncode != 0:
        raise RuntimeError(f"opencode run failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


@contextmanager
def mock_provider() -> Iterator[Any]:
    """The local OpenAI-compatible provider on 127.0.0.1."""
    from plait.devtools.mock_provider import MockProvider

    provider = MockProvider(reply="OK.").start()
    try:
        yield provider
    finally:
        provider.stop()


def plait_tool_bytes(body: dict[str, Any]) -> int:
    """Bytes of the ``plait_*`` tools in one request body (compact JSON); 0 when none."""
    tools = [t for t in body.get("tools") or [] if t["function"]["name"].startswith("plait_")]
    return len(json.dumps(tools, separators=(",", ":"))) if tools else 0


def bench_opencode(binary: Path, rounds: int, base: Path) -> dict[str, Any]:
    """``opencode run`` without and with plait, interleaved; first runs reported apart."""
    with mock_provider() as provider:
        without = make_opencode_project(base, "without", provider.base_url, plait=False)
        with_plait = make_opencode_project(base, "with", provider.base_url, plait=True)
        first = {
            "without": opencode_run(binary, without, "Hello."),
            "with": opencode_run(binary, with_plait, "Hello."),
        }
        samples: dict[str, list[float]] = {"without": [], "with": []}
        try:
            for round_number in range(rounds):
                for name, project in (("without", without), ("with", with_plait)):
                    samples[name].append(opencode_run(binary, project, f"Turn {round_number}."))
            sent = max((plait_tool_bytes(r.body) for r in provider.requests), default=0)
        finally:
            subprocess.run([PLAIT, "stop", "--all"], env=with_plait.env(), capture_output=True)
    return {"first": first, "samples": samples, "schema_bytes": sent}


def run_startup_bench(
    app: Any, rounds: int, *, opencode: bool = False, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Every figure of this module (``app``: the CLI), in a scratch directory removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="plait-bench-startup-"))
    try:
        project, data_dir = scratch / "project", scratch / "data"
        project.mkdir()
        env = clean_env(PLAIT_DATA_DIR=str(data_dir), XDG_CONFIG_HOME=str(scratch / "xdg"))
        log("bare python")
        bare_samples = time_command([PYTHON, "-c", "pass"], rounds, env)
        bare = Figure(name="`python -c pass`", samples=bare_samples)
        log("--help of every command")
        helps = bench_help(app, rounds, env)
        log("plait mcp")
        mcp = bench_mcp(rounds, project, env)
        log("plait serve")
        serve = bench_serve(rounds, project, data_dir, env)
        log("Memory.open")
        memory = bench_memory_open(rounds, project, scratch / "memory-data")
        result: dict[str, Any] = {
            "bare": bare,
            "help": helps,
            "mcp": mcp,
            "serve": serve,
            "memory": memory,
            "schema": {
                "default": schema_bytes(DEFAULT_TOOL_GROUPS),
                "all": schema_bytes(),
            },
        }
        binary = opencode_binary() if opencode else None
        if opencode and binary is None:
            log("no OpenCode: run the e2e tests once (they install it)")
        if binary is not None:
            log("opencode run, with and without plait")
            result["opencode"] = bench_opencode(binary, rounds, scratch / "opencode")
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(result: dict[str, Any]) -> str:
    """The figures as markdown tables."""
    bare: Figure = result["bare"]
    head = "| what | runs | median ms | max ms | × bare python | note |\n|---|---|---|---|---|---|"
    rows = [bare.row(bare.median)]
    rows += [figure.row(bare.median) for figure in result["help"]]
    rows += [figure.row(bare.median) for figure in (*result["mcp"], result["serve"])]
    rows += [figure.row() for figure in result["memory"]]
    worst = max(result["help"], key=lambda figure: figure.median)
    lines = [
        head,
        *rows,
        "",
        f"Slowest `--help`: {worst.name}, {worst.median / bare.median:.1f}× bare python.",
        f"Tool schemas as OpenCode sends them: {result['schema']['default']} bytes for the "
        f"default groups, {result['schema']['all']} bytes for every tool.",
    ]
    if "opencode" in result:
        oc = result["opencode"]
        without, with_plait = (statistics.median(oc["samples"][k]) for k in ("without", "with"))
        lines += [
            "",
            "| `opencode run`, one turn | runs | median s | all runs s |",
            "|---|---|---|---|",
            *(
                f"| {name} plait | {len(oc['samples'][key])} | "
                f"{statistics.median(oc['samples'][key]):.2f} | "
                f"{', '.join(f'{s:.2f}' for s in oc['samples'][key])} |"
                for name, key in (("without", "without"), ("with", "with"))
            ),
            "",
            f"With plait a turn takes {with_plait - without:+.2f} s against one without "
            f"(medians, interleaved); first runs (OpenCode's own first start included): "
            f"{oc['first']['without']:.2f} s without, {oc['first']['with']:.2f} s with. "
            f"plait's tools in the request: {oc['schema_bytes']} bytes.",
        ]
    return "\n".join(lines)


__all__ = ["Figure", "render", "run_startup_bench", "schema_bytes"]
