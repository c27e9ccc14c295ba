"""Everyday commands: doctor, demo, recall, the configuration reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.state.ports import MemoryHit


@cli.app.command()
def doctor(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Check plait's parts and its host integrations; exit 1 when something is wrong.

    Hot tier, checkpointer, knowledge graph, LLM, embedder, the drain queue and dead letters;
    then the OpenCode plugin, its MCP entry, the project's service and the plugin's outbox;
    then Claude Code's, Codex's and Gemini CLI's hooks and MCP entries.
    """
    from plait.adapters.hosts.claude_code.health import claude_code_checks
    from plait.adapters.hosts.codex.health import codex_checks
    from plait.adapters.hosts.gemini.health import gemini_checks
    from plait.adapters.hosts.http.lifecycle import service_states
    from plait.adapters.hosts.opencode.health import opencode_checks
    from plait.doctor import exit_code, run_checks

    settings = cli.load_settings(project, data_dir)
    # a running plait serve owns the embedded server and brings it back: never start a second
    serving = any(state.running for state in service_states(settings.resolved_data_dir()))
    directory = (project or Path.cwd()).resolve()
    checks = cli.run(run_checks(settings, directory, launch=not serving))
    checks += opencode_checks(settings.resolved_data_dir(), directory)
    checks += claude_code_checks(directory)
    checks += codex_checks(directory)
    checks += gemini_checks(directory)
    if json_output:
        typer.echo(json.dumps({"checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        from rich.table import Table

        table = Table("component", "status", "detail", title="plait doctor")
        colours = {"ok": "green", "degraded": "yellow", "unavailable": "red"}
        for check in checks:
            status = f"[{colours[check.status]}]{check.status}[/]"
            table.add_row(check.component, status, check.detail)
        cli.console.print(table)
    raise typer.Exit(exit_code(checks))


@cli.app.command()
def demo(project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None) -> None:
    """Replay a long coding session and show what survives each compaction."""
    from plait.cli.demo import run_demo

    cli.load_settings(project, data_dir)
    ok = cli.run(run_demo(cli.console, data_dir=data_dir, project_dir=project))
    raise typer.Exit(0 if ok else 1)


@cli.app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option(min=1, max=100, help="Most hits shown.")] = 10,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Search the project's long-term memory (and your preferences), best first."""
    from plait.memory import Memory

    settings = cli.load_settings(project, data_dir)
    from plait.state.events import clean_text

    query = clean_text(query)  # an argument that was not UTF-8 arrives with lone surrogates
    if not query.strip():
        cli.fail("the query is empty", code=2)

    async def search() -> list[MemoryHit]:
        async with Memory.open(project, settings=settings, start_background=False) as memory:
            return await memory.search(query, limit)

    try:
        hits = cli.run(search())
    except PlaitError as error:
        cli.fail(str(error))
    if json_output:
        typer.echo(json.dumps([hit.model_dump(mode="json") for hit in hits], indent=2))
        return
    from rich.table import Table

    table = Table("kind", "score", "since", "text", title=f"long-term memory: {query}")
    for hit in hits:
        since = f"{hit.valid_at:%Y-%m-%d}" if hit.valid_at else ""
        table.add_row(hit.kind, f"{hit.score:.2f}", since, hit.text)
    cli.console.print(table if hits else "No memories found.")


@cli.app.command("config-reference")
def config_reference(
    output: Annotated[Path, typer.Option(help="Where to write it.")] = Path(
        "docs/configuration.md"
    ),
) -> None:
    """Write the configuration reference generated from the settings model."""
    from plait.devtools.configref import render_reference

    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_reference())
    cli.console.print(f"wrote {output}")
