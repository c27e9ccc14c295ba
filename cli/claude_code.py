"""``plait claude-code``: the Claude Code integration."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plait.cli._common import ProjectOption, app
from plait.cli.opencode import changed_files, print_report

claude_code_app = typer.Typer(help="Claude Code integration.", no_args_is_help=True)
app.add_typer(claude_code_app, name="claude-code")

GlobalOption = Annotated[
    bool, typer.Option("--global", help="Your user settings (~/.claude), not the project's.")
]

NEXT_STEPS = """\
What happens next:
  - Start Claude Code here as usual (`claude`). Each hook runs `plait-hook`, which starts
    `plait serve` for this project on first use and answers within a second meanwhile.
  - Session start and every prompt get plait's memory as context; tool results, compactions
    and stops are recorded (kept on disk first when the service is down).
  - Your past Claude Code sessions of this project: `plait import-history --host claude-code`.
  - Check it with `plait doctor`; undo it with `plait claude-code uninstall`."""


def run(install: bool, project: Path | None, global_: bool) -> None:
    """Install or uninstall, and say what changed."""
    from plait.adapters.hosts.claude_code.install import (
        install_claude_code,
        uninstall_claude_code,
    )

    directory = (project or Path.cwd()).resolve()
    action = install_claude_code if install else uninstall_claude_code
    report = changed_files(action, directory, global_)
    where = "for your user" if global_ else f"in {directory}"
    verb = "installed for" if install else "uninstalled from"
    print_report(report, f"plait is {verb} Claude Code {where}:")
    if install:
        typer.echo(NEXT_STEPS)


@claude_code_app.command("install")
def claude_code_install(project: ProjectOption = None, global_: GlobalOption = False) -> None:
    """Add plait's hooks and MCP server to Claude Code (the project's files, or --global)."""
    run(True, project, global_)


@claude_code_app.command("uninstall")
def claude_code_uninstall(project: ProjectOption = None, global_: GlobalOption = False) -> None:
    """Remove what `plait claude-code install` added (backups of changed files are kept)."""
    run(False, project, global_)
