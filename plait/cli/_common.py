"""What every ``plait`` command shares: the app, its options, settings loading, failing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from plait.errors import PlaitError
from plait.settings import Settings

if TYPE_CHECKING:
    pass

app = typer.Typer(
    name="plait",
    help="A memory layer for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()

ProjectOption = Annotated[
    Path | None, typer.Option("--project", "-p", help="Project directory (default: here).")
]
DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Where plait keeps its data.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def load_settings(project: Path | None, data_dir: Path | None) -> Settings:
    """Settings for the command, or exit 2 with the one-line reason."""
    overrides = {"data_dir": data_dir} if data_dir is not None else {}
    try:
        return Settings.load(project, **overrides)
    except PlaitError as error:
        fail(str(error), code=2)


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print one line to stderr and exit with ``code``."""
    typer.echo(f"plait: {message}", err=True)
    raise typer.Exit(code)


__all__ = [
    "DataDirOption",
    "JsonOption",
    "ProjectOption",
    "app",
    "console",
    "fail",
    "load_settings",
]
