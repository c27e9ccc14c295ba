"""``plait token``: per-user tokens for a service a team shares (create, list, revoke).

A token is printed once, when it is made; plait keeps only its digest in ``<data_dir>/tokens.json``.
It opens the projects it names (the project by default, ``--all-projects`` for every one this
data dir serves) at its rate; the owner's token (``<data_dir>/token``) still opens everything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.adapters.backends.tokens import FileTokenBook
    from plait.state.tokens import TokenRecord

token_app = typer.Typer(help="Per-user tokens for a shared service.", no_args_is_help=True)
cli.app.add_typer(token_app, name="token")


def _book(project: Path | None, data_dir: Path | None) -> FileTokenBook:
    from plait.adapters.backends.tokens import FileTokenBook

    return FileTokenBook(cli.load_settings(project, data_dir).resolved_data_dir())


def _row(record: TokenRecord) -> dict[str, object]:
    return {
        "id": record.id,
        "user": record.user,
        "projects": list(record.projects),
        "rate_per_minute": record.rate_per_minute,
        "created_at": record.created_at.isoformat(timespec="seconds"),
        "revoked_at": record.revoked_at.isoformat(timespec="seconds")
        if record.revoked_at
        else None,
    }


@token_app.command("create")
def token_create(
    user: Annotated[str, typer.Option("--user", help="Who the token is for.")],
    all_projects: Annotated[
        bool, typer.Option("--all-projects", help="Every project this data dir serves.")
    ] = False,
    rate: Annotated[int, typer.Option(min=1, help="Requests a minute before 429.")] = 600,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Make a token for a user; it is printed once and kept only as a digest."""
    from plait.state.groups import project_key
    from plait.state.tokens import ALL_PROJECTS

    scope = ALL_PROJECTS if all_projects else project_key(project or Path.cwd())
    try:
        token, record = _book(project, data_dir).create(
            user, projects=(scope,), rate_per_minute=rate
        )
    except PlaitError as error:
        cli.fail(str(error), code=2)
    if json_output:
        typer.echo(json.dumps({**_row(record), "token": token}))
        return
    cli.console.print(
        f"token {record.id} for {record.user} (projects {', '.join(record.projects)})"
    )
    typer.echo(token)
    cli.console.print("It is shown only now: plait keeps its digest, not the token.")


@token_app.command("list")
def token_list(
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Every token of this data dir, revoked ones marked (never the tokens themselves)."""
    try:
        records = _book(project, data_dir).records()
    except PlaitError as error:
        cli.fail(str(error), code=2)
    if json_output:
        typer.echo(json.dumps([_row(record) for record in records]))
        return
    if not records:
        cli.console.print("no tokens (plait token create --user NAME makes one)")
    for record in records:
        state = f"revoked {record.revoked_at:%Y-%m-%d %H:%M}" if record.revoked_at else "active"
        cli.console.print(
            f"{record.id}  {record.user}  {state}  {record.rate_per_minute}/min  "
            f"projects {', '.join(record.projects)}  created {record.created_at:%Y-%m-%d %H:%M}",
            markup=False,
        )


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (plait token list).")],
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Revoke a token: the next request that carries it is refused (401)."""
    try:
        record = _book(project, data_dir).revoke(token_id)
    except PlaitError as error:
        cli.fail(str(error), code=2)
    if json_output:
        typer.echo(json.dumps(_row(record)))
    else:
        cli.console.print(f"revoked {record.id} ({record.user})", markup=False)
