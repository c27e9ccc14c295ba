"""``plait memory``: see and control the project's observations; ``plait forget``: captured events.

``list``, ``show ID``, ``search QUERY``, ``forget ID``, ``export`` and ``import FILE``, each with
``--json``. Export is JSONL, one observation a line, stable and sorted; ``--scope project`` leaves
personal memory out, so a team can commit ``.plait/memory.jsonl`` and share project memory
through git (plait imports that file whenever its content changed). Import is idempotent: the
same file twice changes nothing, a broken line is named and the rest still applies.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError, UsageError

if TYPE_CHECKING:
    from plait.observations import Observations
    from plait.state.observations import Observation, Scope

memory_app = typer.Typer(help="Observations: list, show, search, forget, export, import.")
cli.app.add_typer(memory_app, name="memory", no_args_is_help=True)

IdArgument = Annotated[str, typer.Argument(help="An observation id (o + 12 hex digits).")]
ScopeOption = Annotated[
    str | None, typer.Option("--scope", help="project or personal (default: both).")
]


def run_with[T](
    project: Path | None, data_dir: Path | None, action: Callable[[Observations], Awaitable[T]]
) -> T:
    """Open the project's memory, run ``action`` on its observations, close it; fail cleanly."""
    from plait.memory import Memory

    settings = cli.load_settings(project, data_dir)
    directory = (project or Path.cwd()).resolve()

    async def run() -> T:
        async with Memory.open(directory, settings=settings, start_background=False) as memory:
            return await action(memory.observations)

    try:
        return cli.run(run())
    except PlaitError as error:
        cli.fail(str(error))


def run_on_one(
    project: Path | None,
    data_dir: Path | None,
    observation_id: str,
    act: Callable[[Observations, str], Awaitable[Observation]],
) -> Observation:
    """:func:`run_with` for ``act`` on one observation, its id checked first."""
    from plait.state.observations import check_id

    async def action(observations: Observations) -> Observation:
        return await act(observations, check_id(observation_id))

    return run_with(project, data_dir, action)


def checked_scope(value: str | None) -> Scope | None:
    """A ``--scope`` value, or exit 2 naming it."""
    from plait.state.observations import check_scope

    if value is None:
        return None
    try:
        return check_scope(value, "--scope")
    except PlaitError as error:
        cli.fail(str(error), code=2)


def print_json(value: Any) -> None:
    """Print JSON, indented, UTF-8 as is."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def print_rows(rows: list[dict[str, Any]], empty: str) -> None:
    """One line per observation: id, type, scope, date, title (greppable, never wrapped)."""
    if not rows:
        typer.echo(empty)
    for row in rows:
        mark = f" (superseded by {row['superseded_by']})" if row.get("superseded_by") else ""
        day = row["updated_at"][:10]
        typer.echo(f"{row['id']}  {row['type']:<15} {row['scope']:<8} {day}  {row['title']}{mark}")


@memory_app.command("list")
def memory_list(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    scope: ScopeOption = None,
    all_: Annotated[bool, typer.Option("--all", help="Include superseded ones.")] = False,
    json_output: cli.JsonOption = False,
) -> None:
    """List observations, newest first."""
    from plait.observations import listing

    wanted = checked_scope(scope)

    async def action(observations: Observations) -> list[dict[str, Any]]:
        found = await observations.listed(wanted, current=not all_)
        return [listing(o) for o in sorted(found, key=lambda o: o.updated_at, reverse=True)]

    rows = run_with(project, data_dir, action)
    if json_output:
        print_json(rows)
    else:
        print_rows(rows, "no observations")


@memory_app.command("show")
def memory_show(
    observation_id: IdArgument,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Show one observation in full, with its revisions."""
    from plait.observation_tools import full

    observation = run_on_one(project, data_dir, observation_id, lambda o, i: o.get(i))
    if json_output:
        print_json(full(observation))
        return
    cli.console.print(f"[bold]{observation.title}[/]  ({observation.id})", highlight=False)
    meta = f"{observation.type} · {observation.scope} · revision {observation.revision}"
    topic = f" · topic {observation.topic_key}" if observation.topic_key else ""
    cli.console.print(meta + topic, highlight=False, markup=False)
    if observation.superseded_by:
        cli.console.print(f"superseded by {observation.superseded_by}", markup=False)
    typer.echo(f"\n{observation.content}\n")
    for revision in reversed(observation.revisions):
        when = revision.updated_at.isoformat(timespec="seconds")
        typer.echo(f"--- revision {revision.revision} ({when}): {revision.title}")
        typer.echo(revision.content)


@memory_app.command("search")
def memory_search(
    query: Annotated[str, typer.Argument(help="Words to look for.")],
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    limit: Annotated[int, typer.Option(help="Most results.", min=1, max=20)] = 10,
    all_: Annotated[bool, typer.Option("--all", help="Include superseded ones.")] = False,
    json_output: cli.JsonOption = False,
) -> None:
    """Search observations (as the memory_search tool does)."""
    from plait.observation_tools import MemoryToolbox

    async def action(observations: Observations) -> dict[str, Any]:
        toolbox = MemoryToolbox(observations, host="cli")
        arguments = {"query": query, "limit": limit, "all": all_ or None}
        return await toolbox.call("memory_search", arguments, "cli")

    answer = run_with(project, data_dir, action)
    if json_output:
        print_json(answer)
    else:
        print_rows(answer["results"], f"nothing found for {query!r}")


@memory_app.command("forget")
def memory_forget(
    observation_id: IdArgument,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Forget an observation (an import will not bring it back)."""
    from plait.observations import listing

    forgotten = run_on_one(project, data_dir, observation_id, lambda o, i: o.delete(i))
    if json_output:
        print_json({**listing(forgotten), "action": "deleted"})
    else:
        cli.console.print(f"forgot {forgotten.id}: {forgotten.title}", markup=False)


@cli.app.command("forget")
def forget_captured(
    session: Annotated[
        str | None, typer.Option("--session", help="Every event of this session.")
    ] = None,
    before: Annotated[
        str | None,
        typer.Option("--before", help="Events before this date or time (ISO 8601, UTC if bare)."),
    ] = None,
    match: Annotated[
        str | None, typer.Option("--match", help="Events that mention this text (any case).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would go; change nothing.")
    ] = False,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Forget captured events and every copy plait made of them.

    Their queue entries, recall turns, graph episodes, the session's snapshot and envelopes.
    Criteria combine; an observation is forgotten with ``plait memory forget ID``.
    """
    from plait.forgetting import Selection, describe, forget, select
    from plait.memory import Memory

    try:
        selection = Selection(session=session, before=parsed_time(before), match=match or None)
    except PlaitError as error:
        cli.fail(str(error), code=2)
    settings = cli.load_settings(project, data_dir)
    directory = (project or Path.cwd()).resolve()

    async def run() -> Any:
        async with Memory.open(directory, settings=settings, start_background=False) as memory:
            return await (select if dry_run else forget)(memory, selection)

    try:
        found = cli.run(run())
    except PlaitError as error:
        cli.fail(str(error), code=2 if isinstance(error, UsageError) else 1)
    lines = describe(found)
    if json_output:
        print_json({"dry_run": dry_run, "events": found.count, "lines": list(lines)})
        return
    for line in lines:
        cli.console.print(line, markup=False)
    verb = "would forget" if dry_run else "forgot"
    cli.console.print(f"{verb} {found.count} event(s)", markup=False)


def parsed_time(text: str | None) -> datetime | None:
    """An ISO 8601 date or time (UTC when it names no zone), or exit 2 saying why."""
    if text is None:
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        cli.fail(
            f"--before {text!r}: not an ISO 8601 date or time (2026-11-01, 2026-11-01T12:00)",
            code=2,
        )
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


@memory_app.command("export")
def memory_export(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    scope: ScopeOption = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
    ] = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Export observations as JSONL (stable, sorted); --scope project for a team file."""
    wanted = checked_scope(scope)

    async def action(observations: Observations) -> list[str]:
        return await observations.export_lines(wanted)

    lines = run_with(project, data_dir, action)
    text = "".join(f"{line}\n" for line in lines)
    if output is not None:
        from plait.adapters.backends.private_files import write_private

        output.parent.mkdir(parents=True, exist_ok=True)
        write_private(output, text)  # 0600: personal memory may be in it
        summary = {"file": str(output), "observations": len(lines)}
        print_json(summary) if json_output else typer.echo(f"exported {len(lines)} to {output}")
    elif json_output:
        print_json([json.loads(line) for line in lines])
    else:
        sys.stdout.write(text)


@memory_app.command("import")
def memory_import(
    file: Annotated[Path, typer.Argument(help="A file from plait memory export ('-': stdin).")],
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Import exported observations; broken lines are named, the rest applies."""
    if str(file) == "-":
        text = sys.stdin.read()
    elif not file.is_file():
        cli.fail(f"no file {str(file)!r}", code=2)
    else:
        text = file.read_text(encoding="utf-8", errors="replace")

    async def action(observations: Observations) -> dict[str, Any]:
        return (await observations.import_lines(text.splitlines())).as_dict()

    report = run_with(project, data_dir, action)
    if json_output:
        print_json(report)
    else:
        counts = ", ".join(f"{report[k]} {k}" for k in ("added", "updated", "unchanged", "skipped"))
        typer.echo(f"imported: {counts}")
        for line in report["errors"]:
            typer.echo(f"plait: {line}", err=True)
    if report["errors"]:
        raise typer.Exit(1)


__all__ = ["memory_app"]
