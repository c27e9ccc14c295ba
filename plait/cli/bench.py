"""``plait bench``: measure plait and write ``docs/benchmarks.md``."""

from __future__ import annotations

import asyncio
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
        f"directly with offline embeddings, {rounds} searches per size on the embedded "
        f"FalkorDB server; `search_memory` is the knowledge graph's part of plait's search "
        f"(hybrid candidates of facts and entities, the lookup of what invalidated facts made "
        f"stale, one cross-kind rerank, the events each fact's episode holds; turns come from "
        f"the recall index, section Recall index search), the other rows its parts and "
        f"graphiti-core's own queries for comparison.\n\n{table}\n"
    )
    write_section(output, "Knowledge-graph search", body)
    console.print(table)


@bench_app.command("drain")
def bench_drain_command(
    events: Annotated[int, typer.Option(help="Events to drain.")] = 500,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Events per second through the drain (recall index and Graphiti), offline."""
    import tempfile
    import time

    from plait.devtools.bench import seed_event, stamp, write_section
    from plait.memory import Memory

    async def measure() -> tuple[int, int, int, int, float, float]:
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
            async with Memory.open(Path(scratch), Path(scratch), start_background=False) as memory:
                assert memory.background is not None
                await memory.background.knowledge()
                batch = [seed_event("bench", i) for i in range(events)]
                await memory.store.append_events("bench", batch, enqueue_group=memory.group_id)
                started = time.perf_counter()
                report = await memory.background.drain()
                seconds = time.perf_counter() - started
                started = time.perf_counter()
                vectors = await memory.background.embed_pending()
                embedding = time.perf_counter() - started
                computed = getattr(memory.background.embedder, "computed", vectors)
                return report.drained, report.written, vectors, computed, seconds, embedding

    drained, written, vectors, computed, seconds, embedding = asyncio.run(measure())
    rate = drained / seconds if seconds else 0.0
    body = (
        f"{stamp()}\n\n`uv run plait bench drain --events {events}`: {events} queued events "
        f"(a mix of edits, reads, decisions, tasks, errors and prompts) drained by the drain "
        f"graph on the embedded server, offline, with the default settings: every event into "
        f"the recall index, the {written} lasting ones into Graphiti with the offline "
        f"extractor, one episode per batch. {drained} drained in {seconds:.2f} s, "
        f"**{rate:.0f} events/s**. Embedding is a background pass after the drain that does "
        f"not hold the queue: {vectors} vectors in {embedding:.1f} s ({computed} computed by "
        f"the model, the rest from the embedding cache).\n"
    )
    write_section(output, "Drain", body)
    console.print(
        f"{drained} events in {seconds:.2f} s: {rate:.0f} events/s; {vectors} vectors "
        f"in {embedding:.1f} s ({computed} computed)"
    )


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


@bench_app.command("cost")
def bench_cost_command(output: OutputOption = Path("docs/benchmarks.md")) -> None:
    """LLM calls and tokens per 100 session events, against a local OpenAI-compatible server."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.cost import SESSIONS, measure_cost, render_cost

    rows = asyncio.run(measure_cost())
    table = render_cost(rows)
    body = (
        f"{stamp()}\n\n`uv run plait bench cost`: the demo's coding session played {SESSIONS} "
        "times (two sessions of one project) through `plait.Memory`, with `llm.base_url` and "
        "`embedder.base_url` set to a local OpenAI-compatible server that answers "
        "graphiti-core's prompts with the offline extractor and counts every request (tokens "
        "estimated at four characters a token). *plait now* is the drain as it runs: the "
        "background drain waits for `redis.drain_quiet_seconds` without new events, then one "
        "episode per root session and batch of lasting knowledge. *One episode per event* "
        "writes every event but assistant chatter and raw tool output as its own episode, as "
        "the drain did before.\n\n" + table
    )
    write_section(output, "LLM cost", body)
    console.print(table)


@bench_app.command("turns")
def bench_turns_command(
    dataset: Annotated[Path, typer.Option(help="Recall dataset JSON.")] = Path(
        "datasets/devlog.json"
    ),
    copies: Annotated[str, typer.Option(help="Sizes, as copies of the dataset.")] = "1,10,40",
    rounds: Annotated[int, typer.Option(help="Questions asked per size.")] = 200,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Recall index: indexing and search p50/p95 as a project's turns grow."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.turn_bench import bench_turns

    sizes = tuple(int(size) for size in copies.split(","))
    timings = bench_turns(dataset, sizes, rounds)
    lines = ["| turns | operation | p50 ms | p95 ms |", "|---|---|---|---|"]
    for t in timings:
        turns = f"{t.turns:,}" if t.turns else "–"
        lines.append(f"| {turns} | {t.operation} | {t.p50_ms:.1f} | {t.p95_ms:.1f} |")
    table = "\n".join(lines)
    body = (
        f"{stamp()}\n\n`uv run plait bench turns --dataset {dataset} --copies {copies}`: the "
        f"dataset's turns (repeated as further sessions) in one group of the recall index, "
        f"{rounds} of its questions asked with words only and with vectors (random unit vectors "
        f"of 384 dimensions: ranking cost does not depend on what they say); the last row is "
        f"the bundled model embedding one query, which a search with vectors adds.\n\n"
        f"{table}\n"
    )
    write_section(output, "Recall index search", body)
    console.print(table)
