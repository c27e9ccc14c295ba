"""``plait bench``: measure plait and write ``docs/benchmarks.md``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli._common import (
    DataDirOption,
    JsonOption,
    app,
    console,
    fail,
)
from plait.cli._common import run as _run
from plait.errors import PlaitError

if TYPE_CHECKING:
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

    table = _run(measure())
    body = (
        f"{stamp()}\n\n`uv run plait bench hotpath`: one `chat.message` then one "
        "`experimental.chat.messages.transform` per turn through `plait.Memory.hook` and the "
        "hooks graph, on the embedded FalkorDB server, after seeding each session with that many "
        f"prior events (log and snapshot). {rounds} measured turns per size after 20 warm-up "
        f"turns.\n\n{table}\n"
    )
    write_section(output, "Hot path", body)
    console.print(table)


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
        result = _run(bench_search(server.url, sizes=counts, rounds=rounds))
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

    written, seconds = _run(measure())
    rate = written / seconds if seconds else 0.0
    body = (
        f"{stamp()}\n\n`uv run plait bench drain --events {events}`: {events} queued events "
        f"drained by the drain graph into Graphiti on the embedded server with the offline "
        f"extractor and embedder (batch size 20): {written} written in {seconds:.1f} s, "
        f"**{rate:.0f} events/s**.\n"
    )
    write_section(output, "Drain", body)
    console.print(f"{written} events in {seconds:.1f} s: {rate:.0f} events/s")


@bench_app.command("capture")
def bench_capture_command(
    datasets: Annotated[
        Path, typer.Option(help="The capture corpus folder (see its README).")
    ] = Path("datasets/capture"),
    output: OutputOption = Path("docs/benchmarks.md"),
    misses: Annotated[bool, typer.Option(help="List every miss of the held-out items.")] = False,
) -> None:
    """Precision and recall of capture per kind, and supersession, on the labelled corpus."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.capture import CaptureDatasetError, capture_section

    try:
        body = capture_section(datasets, with_misses=misses)
    except (CaptureDatasetError, OSError) as error:
        fail(str(error), code=2)
    write_section(output, "Capture", f"{stamp()}\n\n{body}")
    console.print(body)


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
        report = _run(run_recall_bench(dataset, ks))
    except DatasetError as error:
        fail(str(error), code=2)
    except PlaitError as error:
        fail(str(error))
    typer.echo(report.to_json() if json_output else render_report(report))


@bench_app.command("startup")
def bench_startup_command(
    rounds: Annotated[int, typer.Option(min=1, help="Fresh processes per figure.")] = 5,
    opencode: Annotated[
        bool, typer.Option(help="Also time real `opencode run` with and without plait.")
    ] = False,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Start-up times: --help, plait mcp's handshake, plait serve, Memory.open, opencode run."""
    import os

    from plait.devtools.bench import stamp, write_section
    from plait.devtools.startup import render, run_startup_bench

    before = os.getloadavg()[0]
    table = render(run_startup_bench(rounds, opencode=opencode, log=console.print))
    load = f"Load average {before:.1f} when it started, {os.getloadavg()[0]:.1f} when it ended."
    body = (
        f"{stamp()} {load}\n\n`uv run plait bench startup"
        f"{' --opencode' if opencode else ''}`: each figure is {rounds} fresh processes "
        "(median and max); bare `python -c pass` is the "
        "yardstick. `plait mcp` is timed from process start to each answer over stdio; `plait "
        "serve` to its health check (the embedded server not running before); `Memory.open` "
        "in a fresh process while another holds the embedded server. With `--opencode`, one "
        "`opencode run` turn in a project without plait and one with `plait opencode install`, "
        "interleaved, against the local mock provider (the service stays up between runs, as "
        "it does for a person; the first run of each is reported apart).\n\n"
        f"{table}\n\n"
        "Before this work (issue #16, same kind of machine): `plait --help` 5-6 s (about 70x a "
        "bare start), `plait mcp` 7-11 s to answer `initialize`, an `opencode run` turn 8 s "
        "slower with plait (median of 5: 3.7 s without, 11.8 s with), 7.8 KB of tool schemas "
        "per request, `Memory.open` about 4.7 s when it started the embedded server (closing "
        "it 1.7-2.0 s).\n"
    )
    write_section(output, "Start-up", body)
    console.print(table)
