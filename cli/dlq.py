"""``plait dlq``: dead letters (events that failed to drain) and dead calls (``dlq calls``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.adapters.backends.spool import FileSpool
    from plait.state.base.settings import Settings
    from plait.state.ports import DeadCall, DeadLetters

dlq_app = typer.Typer(help="Dead letters: events that failed to drain.", no_args_is_help=True)
cli.app.add_typer(dlq_app, name="dlq")
IdsArgument = Annotated[
    list[str] | None, typer.Argument(help="Dead-letter ids (default: all).", show_default=False)
]


async def _with_store[T](
    settings: Settings, project: Path, action: Callable[[DeadLetters], Awaitable[T]]
) -> T:
    from plait.wiring import open_backends

    backends = await open_backends(settings, project, allow_degraded=False)
    try:
        return await action(backends.store)
    finally:
        await backends.aclose()


def _run_store[T](
    project: Path | None, data_dir: Path | None, action: Callable[[DeadLetters], Awaitable[T]]
) -> T:
    settings = cli.load_settings(project, data_dir)
    try:
        return cli.run(_with_store(settings, (project or Path.cwd()).resolve(), action))
    except PlaitError as error:
        cli.fail(str(error))


@dlq_app.command("list")
def dlq_list(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """List dead letters with the reason each failed, then the project's dead calls, if any.

    ``--json`` lists the dead letters only (``plait dlq calls list --json`` the calls).
    """
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
    from rich.table import Table

    table = Table("id", "group", "kind", "summary", "attempts", "reason", title="dead letters")
    for d in letters:
        table.add_row(
            d.dead_id, d.group_id, d.event.kind.value, d.event.summary, str(d.attempts), d.reason
        )
    cli.console.print(table)
    calls = _spool(project, data_dir).list_dead_calls(limit=10_000)
    if calls:
        print_dead_calls(calls)
        cli.console.print("replay or drop them with `plait dlq calls replay|drop`")


@dlq_app.command("replay")
def dlq_replay(
    ids: IdsArgument = None, project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None
) -> None:
    """Put dead letters back on the drain queue."""
    count = _run_store(project, data_dir, lambda store: store.replay_dead(ids or None))
    cli.console.print(f"replayed {count} dead letter(s)")


@dlq_app.command("drop")
def dlq_drop(
    ids: IdsArgument = None, project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None
) -> None:
    """Delete dead letters."""
    count = _run_store(project, data_dir, lambda store: store.drop_dead(ids or None))
    cli.console.print(f"dropped {count} dead letter(s)")


calls_app = typer.Typer(
    help="Dead calls: host calls plait could not use or run (kept in the project's spool).",
    no_args_is_help=True,
)
dlq_app.add_typer(calls_app, name="calls")


def _spool(project: Path | None, data_dir: Path | None) -> FileSpool:
    from plait.adapters.backends.spool import FileSpool

    settings = cli.load_settings(project, data_dir)
    return FileSpool.for_project(settings.resolved_data_dir(), (project or Path.cwd()).resolve())


@calls_app.command("list")
def dlq_calls_list(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """List dead calls of the project with the reason each was given up."""
    dead = _spool(project, data_dir).list_dead_calls(limit=10_000)
    if json_output:
        rows = [call.model_dump(mode="json") for call in dead]
        typer.echo(json.dumps(rows, indent=2))
        return
    print_dead_calls(dead)


def print_dead_calls(dead: Sequence[DeadCall]) -> None:
    """The dead calls as a table: id, call id, host, hook and why each was given up."""
    from rich.table import Table

    table = Table("id", "call id", "host", "hook", "reason", title="dead calls")
    for call in dead:
        name = str(call.call.get("name") or call.call.get("event") or "")
        table.add_row(call.dead_id, call.call_id, call.host, name, call.reason)
    cli.console.print(table)


@calls_app.command("replay")
def dlq_calls_replay(
    ids: IdsArgument = None, project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None
) -> None:
    """Put dead calls back in the spool (the next plait serve for the project runs them)."""
    count = _spool(project, data_dir).replay_dead_calls(ids or None)
    cli.console.print(f"replayed {count} dead call(s)")


@calls_app.command("drop")
def dlq_calls_drop(
    ids: IdsArgument = None, project: cli.ProjectOption = None, data_dir: cli.DataDirOption = None
) -> None:
    """Delete dead calls."""
    count = _spool(project, data_dir).drop_dead_calls(ids or None)
    cli.console.print(f"dropped {count} dead call(s)")
