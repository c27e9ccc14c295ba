"""``plait claude-code|codex|gemini install|uninstall``: the command-hook hosts' integrations.

Each host's folder under ``adapters/hosts/`` has an ``install`` module with
``install_<host>(project, global_=…)`` and ``uninstall_<host>(…)``; this module gives each a
typer group with the two commands and says what changed and what happens next.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Annotated

import typer

from plait.cli import _common as cli
from plait.cli.opencode import changed_files, print_report


@dataclass(frozen=True, kw_only=True)
class HostCommands:
    """One host's ``install`` and ``uninstall``: names, where ``--global`` writes, next steps.

    ``module``: the host's folder under ``adapters/hosts/``, whose ``install`` module has
    ``install_<module>`` and ``uninstall_<module>``; the command is its name with dashes.
    """

    module: str
    label: str
    user_files: str
    next_steps: str

    @property
    def command(self) -> str:
        """``plait <command> install``."""
        return self.module.replace("_", "-")

    def run(self, install: bool, project: Path | None, global_: bool) -> None:
        """Install or uninstall, and say what changed."""
        installer = import_module(f"plait.adapters.hosts.{self.module}.install")
        verb = "install" if install else "uninstall"
        action = getattr(installer, f"{verb}_{self.module}")
        directory = (project or Path.cwd()).resolve()
        report = changed_files(action, directory, global_)
        where = "for your user" if global_ else f"in {directory}"
        said = "installed for" if install else "uninstalled from"
        print_report(report, f"plait is {said} {self.label} {where}:")
        if install:
            typer.echo(self.next_steps)
            offer_history(self.command, directory)

    def register(self) -> None:
        """Add ``plait <command> install|uninstall`` to the CLI."""
        group = typer.Typer(help=f"{self.label} integration.", no_args_is_help=True)
        cli.app.add_typer(group, name=self.command)
        global_option = Annotated[
            bool, typer.Option("--global", help=f"Your user settings ({self.user_files}).")
        ]

        def install(project: cli.ProjectOption = None, global_: bool = False) -> None:
            self.run(True, project, global_)

        def uninstall(project: cli.ProjectOption = None, global_: bool = False) -> None:
            self.run(False, project, global_)

        install.__doc__ = (
            f"Add plait's hooks and MCP server to {self.label} (the project's files, or --global)."
        )
        uninstall.__doc__ = (
            f"Remove what `plait {self.command} install` added (backups of changed files are kept)."
        )
        # the options are made here, per host: give typer the objects, not their names
        for command in (install, uninstall):
            command.__annotations__ = {"project": cli.ProjectOption, "global_": global_option}
        group.command("install")(install)
        group.command("uninstall")(uninstall)


def offer_history(host: str, project: Path) -> None:
    """Say how many past sessions of the host this project has, and how to import them."""
    from plait.cli.history import reader_for
    from plait.state.base.errors import PlaitError

    try:
        found = len(reader_for(host, project, None).sessions())  # type: ignore[arg-type]
    except (PlaitError, OSError):
        return
    if found:
        typer.echo(
            f"  - {found} past session(s) of this project are in your {host} history: "
            f"`plait import-history --host {host}` brings them into memory."
        )


CLAUDE_CODE = HostCommands(
    module="claude_code",
    label="Claude Code",
    user_files="~/.claude",
    next_steps="""\
What happens next:
  - Start Claude Code here as usual (`claude`). Each hook runs `plait-hook`, which starts
    `plait serve` for this project on first use and answers within a second meanwhile.
  - Session start and every prompt get plait's memory as context; tool results, compactions
    and stops are recorded (kept on disk first when the service is down).
  - Your past Claude Code sessions of this project: `plait import-history --host claude-code`.
  - Check it with `plait doctor`; undo it with `plait claude-code uninstall`.""",
)
CODEX = HostCommands(
    module="codex",
    label="Codex",
    user_files="$CODEX_HOME, else ~/.codex",
    next_steps="""\
What happens next:
  - Start Codex here as usual (`codex`); plait's hooks are declared trusted in your
    ~/.codex/config.toml. Each hook runs `plait-hook`, which starts `plait serve` for this
    project on first use and answers within a second meanwhile.
  - Session start and every prompt get plait's memory as context; tool results, compactions
    and stops are recorded (kept on disk first when the service is down).
  - Your past Codex sessions of this project: `plait import-history --host codex`.
  - Check it with `plait doctor`; undo it with `plait codex uninstall`.""",
)
GEMINI = HostCommands(
    module="gemini",
    label="Gemini CLI",
    user_files="~/.gemini: always, as Gemini CLI runs hooks only from a user's extensions",
    next_steps="""\
What happens next:
  - Start Gemini CLI here as usual (`gemini`). plait is an extension of yours
    (~/.gemini/extensions/plait); each hook runs `plait-hook`, which starts `plait serve`
    for the project it runs in on first use and answers within a second meanwhile.
  - Session start, every prompt and every tool result get plait's memory as context; prompts,
    tool results and answers are recorded (kept on disk first when the service is down).
  - Check it with `plait doctor`; undo it with `plait gemini uninstall`.""",
)
for host in (CLAUDE_CODE, CODEX, GEMINI):
    host.register()

__all__ = ["CLAUDE_CODE", "CODEX", "GEMINI", "HostCommands"]
