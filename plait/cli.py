"""The ``plait`` command line (typer)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from plait.errors import PlaitError
from plait.settings import Settings

if TYPE_CHECKING:
    from plait.state.ports import HotStore, MemoryHit

app = typer.Typer(
    name="plait",
    help="A memory layer for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()

ProjectOption = Annotated[
    Path | None, typer.Option("--project", "-p", help="Project directory (default: here).")
]
DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Where plait keeps its data.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def load_settings(project: Path | None, data_dir: Path | None) -> Settings:
    """Settings for the command, or exit 2 with the one-line reason."""
    overrides = {"data_dir": data_dir} if data_dir is not None else {}
    try:
        return Settings.load(project, **overrides)
    except PlaitError as error:
        fail(str(error), code=2)


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print one line to stderr and exit with ``code``."""
    typer.echo(f"plait: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def doctor(
    project: ProjectOption = None, data_dir: DataDirOption = None, json_output: JsonOption = False
) -> None:
    """Report hot tier, checkpointer, knowledge graph, LLM and embedder."""
    from plait.doctor import exit_code, run_checks

    settings = load_settings(project, data_dir)
    checks = asyncio.run(run_checks(settings))
    if json_output:
        typer.echo(json.dumps({"checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        table = Table("component", "status", "detail", title="plait doctor")
        colours = {"ok": "green", "degraded": "yellow", "unavailable": "red"}
        for check in checks:
            status = f"[{colours[check.status]}]{check.status}[/]"
            table.add_row(check.component, status, check.detail)
        console.print(table)
    raise typer.Exit(exit_code(checks))


@app.command()
def demo(project: ProjectOption = None, data_dir: DataDirOption = None) -> None:
    """Replay a long coding session and show what survives each compaction."""
    from plait.demo import run_demo

    load_settings(project, data_dir)
    ok = asyncio.run(run_demo(console, data_dir=data_dir, project_dir=project))
    raise typer.Exit(0 if ok else 1)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option(min=1, max=100, help="Most hits shown.")] = 10,
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search the project's long-term memory (and your preferences), best first."""
    from plait.memory import Memory

    settings = load_settings(project, data_dir)
    if not query.strip():
        fail("the query is empty", code=2)

    async def search() -> list[MemoryHit]:
        async with Memory.open(project, settings=settings, start_background=False) as memory:
            return await memory.search(query, limit)

    try:
        hits = asyncio.run(search())
    except PlaitError as error:
        fail(str(error))
    if json_output:
        typer.echo(json.dumps([hit.model_dump(mode="json") for hit in hits], indent=2))
        return
    table = Table("kind", "score", "since", "text", title=f"long-term memory: {query}")
    for hit in hits:
        since = f"{hit.valid_at:%Y-%m-%d}" if hit.valid_at else ""
        table.add_row(hit.kind, f"{hit.score:.2f}", since, hit.text)
    console.print(table if hits else "No memories found.")


dlq_app = typer.Typer(help="Dead letters: events that failed to drain.", no_args_is_help=True)
app.add_typer(dlq_app, name="dlq")
IdsArgument = Annotated[
    list[str] | None, typer.Argument(help="Dead-letter ids (default: all).", show_default=False)
]


async def _with_store[T](settings: Settings, action: Callable[[HotStore], Awaitable[T]]) -> T:
    from plait.wiring import open_backends

    backends = await open_backends(settings, allow_degraded=False)
    try:
        return await action(backends.store)
    finally:
        await backends.aclose()


def _run_store[T](
    project: Path | None, data_dir: Path | None, action: Callable[[HotStore], Awaitable[T]]
) -> T:
    settings = load_settings(project, data_dir)
    try:
        return asyncio.run(_with_store(settings, action))
    except PlaitError as error:
        fail(str(error))


@dlq_app.command("list")
def dlq_list(
    project: ProjectOption = None, data_dir: DataDirOption = None, json_output: JsonOption = False
) -> None:
    """List dead letters with the reason each failed."""
    letters = _run_store(project, data_dir, lambda store: store.list_dead(limit=10_000))
    if json_output:
        rows = [
            {
                "id": d.dead_id,
                "group": d.group_id,
                "attempts": d.attempts,
                "reason": d.reason,
                "event": d.event.model_dump(mode="json"),
            }
            for d in letters
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("id", "group", "kind", "summary", "attempts", "reason", title="dead letters")
    for d in letters:
        table.add_row(
            d.dead_id, d.group_id, d.event.kind.value, d.event.summary, str(d.attempts), d.reason
        )
    console.print(table)


@dlq_app.command("replay")
def dlq_replay(
    ids: IdsArgument = None, project: ProjectOption = None, data_dir: DataDirOption = None
) -> None:
    """Put dead letters back on the drain queue."""
    count = _run_store(project, data_dir, lambda store: store.replay_dead(ids or None))
    console.print(f"replayed {count} dead letter(s)")


@dlq_app.command("drop")
def dlq_drop(
    ids: IdsArgument = None, project: ProjectOption = None, data_dir: DataDirOption = None
) -> None:
    """Delete dead letters."""
    count = _run_store(project, data_dir, lambda store: store.drop_dead(ids or None))
    console.print(f"dropped {count} dead letter(s)")


@app.command()
def worker(
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    name: Annotated[str | None, typer.Option(help="Consumer name (default: host-pid).")] = None,
    once: Annotated[bool, typer.Option(help="Drain until empty, then exit.")] = False,
) -> None:
    """Drain the queue into the knowledge graph (several workers share the queue)."""
    from plait.worker import run_worker

    settings = load_settings(project, data_dir)
    try:
        asyncio.run(run_worker(settings, project or Path.cwd(), consumer=name, once=once))
    except PlaitError as error:
        fail(str(error))
    except KeyboardInterrupt:
        pass


bench_app = typer.Typer(help="Measure plait and write docs/benchmarks.md.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
OutputOption = Annotated[Path, typer.Option("--output", help="The benchmarks file to update.")]


@bench_app.command("hotpath")
def bench_hotpath_command(
    sizes: Annotated[str, typer.Option(help="Prior events per session.")] = "1000,10000,100000",
    rounds: Annotated[int, typer.Option(help="Measured turns per size.")] = 300,
    data_dir: DataDirOption = None,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """chat.message then messages.transform, p50/p99, on sessions of growing length."""
    import tempfile

    from plait.devtools.bench import bench_hotpath, stamp, timing_table, write_section
    from plait.memory import Memory

    async def measure() -> str:
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
            directory = data_dir or Path(scratch)
            async with Memory.open(Path(scratch), directory, start_background=False) as memory:
                counts = tuple(int(size) for size in sizes.split(","))
                return timing_table(await bench_hotpath(memory, counts, rounds))

    table = asyncio.run(measure())
    body = (
        f"{stamp()}\n\n`uv run plait bench hotpath`: one `chat.message` then one "
        "`experimental.chat.messages.transform` per turn through `plait.Memory.hook` and the "
        "hooks graph, on the embedded FalkorDB server, after seeding each session with that many "
        f"prior events (log and snapshot). {rounds} measured turns per size after 20 warm-up "
        f"turns.\n\n{table}\n"
    )
    write_section(output, "Hot path", body)
    console.print(table)


@app.command("config-reference")
def config_reference(
    output: Annotated[Path, typer.Option(help="Where to write it.")] = Path(
        "docs/configuration.md"
    ),
) -> None:
    """Write the configuration reference generated from the settings model."""
    from plait.configref import render_reference

    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_reference())
    console.print(f"wrote {output}")


@app.command()
def serve(
    project: ProjectOption = None,
    data_dir: DataDirOption = None,
    host: Annotated[str | None, typer.Option(help="Bind address (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).")] = None,
) -> None:
    """Run the local HTTP service the OpenCode plugin talks to (loopback, bearer token)."""
    from plait.adapters.hosts.http import running_service
    from plait.adapters.hosts.http import serve as serve_http
    from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
    from plait.memory import Memory

    settings = load_settings(project, data_dir)
    project_dir = (project or Path.cwd()).resolve()
    if running_service(settings.resolved_data_dir(), project_dir) is not None:
        console.print("plait serve: already running for this project")
        raise typer.Exit(0)

    async def run() -> None:
        async with Memory.open(project_dir, settings=settings) as memory:
            await serve_http(
                OpenCodeHooks(memory),
                host or settings.service.host,
                settings.service.port if port is None else port,
                data_dir=settings.resolved_data_dir(),
                project_dir=project_dir,
                max_body_bytes=settings.service.max_body_bytes,
            )

    try:
        asyncio.run(run())
    except PlaitError as error:
        fail(str(error))
    except KeyboardInterrupt:
        pass


@app.command()
def mcp(project: ProjectOption = None, data_dir: DataDirOption = None) -> None:
    """Run plait's MCP server (session tools) on stdio."""
    from plait.adapters.hosts.mcp import run_stdio

    settings = load_settings(project, data_dir)
    try:
        asyncio.run(run_stdio((project or Path.cwd()).resolve(), settings=settings))
    except PlaitError as error:
        fail(str(error))


opencode_app = typer.Typer(help="OpenCode integration.", no_args_is_help=True)
app.add_typer(opencode_app, name="opencode")


@opencode_app.command("install")
def opencode_install(
    project: ProjectOption = None,
    global_: Annotated[
        bool, typer.Option("--global", help="Install for the user, not the project.")
    ] = False,
) -> None:
    """Write the plugin and the MCP entry into opencode.json (the project's, or the user's)."""
    from plait.adapters.hosts.opencode import install_opencode

    try:
        written = install_opencode((project or Path.cwd()).resolve(), global_=global_)
    except PlaitError as error:
        fail(str(error))
    for path in written:
        console.print(f"wrote {path}")


@bench_app.command("search")
def bench_search_command(
    sizes: Annotated[str, typer.Option(help="Edges per graph.")] = "1000,5000,16000",
    rounds: Annotated[int, typer.Option(help="Searches per size.")] = 200,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Refresh search p50/p95 on knowledge graphs of growing size (embedded server)."""
    import tempfile

    from plait.adapters.backends.embedded import EmbeddedFalkorDB
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.search_bench import bench_search

    counts = tuple(int(size) for size in sizes.split(","))
    with (
        tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch,
        EmbeddedFalkorDB(Path(scratch)) as server,
    ):
        result = asyncio.run(bench_search(server.url, sizes=counts, rounds=rounds))
    lines = ["| edges | operation | p50 ms | p95 ms |", "|---|---|---|---|"]
    for size, operations in result["sizes"].items():
        for name, figures in operations.items():
            lines.append(f"| {size} | {name} | {figures['p50']:.1f} | {figures['p95']:.1f} |")
    table = "\n".join(lines)
    body = (
        f"{stamp()}\n\n`uv run plait bench search`: graphs of that many fact edges seeded "
        f"directly with offline embeddings, {rounds} refresh searches per size on the embedded "
        f"FalkorDB server; `search_memory` is plait's refresh search (hybrid candidates of each "
        f"kind, the lookup of what invalidated facts made stale, one cross-kind rerank), the "
        f"other rows its parts and graphiti-core's own queries for comparison.\n\n{table}\n"
    )
    write_section(output, "Knowledge-graph search", body)
    console.print(table)


@bench_app.command("drain")
def bench_drain_command(
    events: Annotated[int, typer.Option(help="Events to drain.")] = 500,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Events per second from the queue into Graphiti with the offline extractor."""
    import tempfile
    import time

    from plait.devtools.bench import seed_event, stamp, write_section
    from plait.memory import Memory

    async def measure() -> tuple[int, float]:
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
            async with Memory.open(Path(scratch), Path(scratch), start_background=False) as memory:
                assert memory.background is not None
                await memory.background.knowledge()
                batch = [seed_event("bench", i) for i in range(events)]
                await memory.store.append_events("bench", batch, enqueue_group=memory.group_id)
                started = time.perf_counter()
                report = await memory.background.drain()
                return report.written, time.perf_counter() - started

    written, seconds = asyncio.run(measure())
    rate = written / seconds if seconds else 0.0
    body = (
        f"{stamp()}\n\n`uv run plait bench drain --events {events}`: {events} queued events "
        f"drained by the drain graph into Graphiti on the embedded server with the offline "
        f"extractor and embedder (batch size 20): {written} written in {seconds:.1f} s, "
        f"**{rate:.0f} events/s**.\n"
    )
    write_section(output, "Drain", body)
    console.print(f"{written} events in {seconds:.1f} s: {rate:.0f} events/s")


@bench_app.command("recall")
def bench_recall_command(
    dataset: Annotated[Path, typer.Option(help="Dataset JSON (see datasets/devlog.json).")],
    k: Annotated[str, typer.Option("--k", help="Cut-offs for recall@k.")] = "5,10,25,50",
    json_output: JsonOption = False,
) -> None:
    """recall@k and NDCG@10 of long-term memory against a BM25 baseline, per category."""
    from plait.devtools.recall import DatasetError, parse_ks, render_report, run_recall_bench

    try:
        ks = parse_ks(k)
        report = asyncio.run(run_recall_bench(dataset, ks))
    except DatasetError as error:
        fail(str(error), code=2)
    except PlaitError as error:
        fail(str(error))
    typer.echo(report.to_json() if json_output else render_report(report))


def main() -> None:
    """Entry point."""
    app()


__all__ = ["app", "main"]
