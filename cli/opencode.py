"""``plait opencode``: the OpenCode integration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.adapters.hosts.opencode import InstallReport

opencode_app = typer.Typer(help="OpenCode integration.", no_args_is_help=True)
cli.app.add_typer(opencode_app, name="opencode")


GlobalOption = Annotated[
    bool, typer.Option("--global", help="The user's OpenCode config, not the project's.")
]

NEXT_STEPS = """\
What happens next:
  - Start OpenCode here as usual (`opencode`). The plugin starts `plait serve` for this
    project on first use (127.0.0.1 only, a bearer token in plait's data dir); the service
    stops by itself after serve.idle_exit_s (30 min) without hooks. `plait status` shows it.
  - Every model call gets a <session_memory> block; compactions get it once.
  - Tool policy: nothing of OpenCode's is taken away. curl/wget in the shell and webfetch get
    a one-line nudge toward plait_session_fetch_and_index (hooks.* settings; set
    hooks.deny_web_fetch = true to deny webfetch instead).
  - Check it with `plait doctor`; undo it with `plait opencode uninstall`."""


def changed_files(
    action: Callable[..., InstallReport], directory: Path, global_: bool
) -> InstallReport:
    """Run a host's install or uninstall; a file plait cannot read or write ends the command."""
    try:
        return action(directory, global_=global_)
    except PlaitError as error:
        cli.fail(str(error))
    except OSError as error:
        cli.fail(f"cannot write {error.filename or directory}: {error.strerror or error}")


def print_report(report: InstallReport, heading: str) -> None:
    """What changed, where the backups are, and the notes."""
    typer.echo(heading)
    for path, what in report.changes:
        typer.echo(f"  {path}: {what}")
    if not report.changes:
        typer.echo("  nothing to change: already as plait would make it")
    for backup in report.backups:
        typer.echo(f"  backup: {backup}")
    for note in report.notes:
        typer.echo(f"  note: {note}")


@opencode_app.command("install")
def opencode_install(project: cli.ProjectOption = None, global_: GlobalOption = False) -> None:
    """Add plait's plugin and MCP server to OpenCode (the project's config, or --global)."""
    from plait.adapters.hosts.opencode import install_opencode

    directory = (project or Path.cwd()).resolve()
    report = changed_files(install_opencode, directory, global_)
    where = "for your user" if global_ else f"in {directory}"
    print_report(report, f"plait is installed for OpenCode {where}:")
    if not global_:
        typer.echo(
            "The project files name no path of this machine: commit them for your team "
            "(each person needs `plait` on PATH)."
        )
    typer.echo(NEXT_STEPS)


@opencode_app.command("uninstall")
def opencode_uninstall(project: cli.ProjectOption = None, global_: GlobalOption = False) -> None:
    """Remove what `plait opencode install` added (backups of changed files are kept)."""
    from plait.adapters.hosts.opencode import uninstall_opencode

    directory = (project or Path.cwd()).resolve()
    report = changed_files(uninstall_opencode, directory, global_)
    print_report(report, "plait is uninstalled from OpenCode:")
