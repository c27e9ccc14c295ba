"""The ``plait`` command line (typer)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from plait.errors import PlaitError
from plait.settings import Settings

app = typer.Typer(
    name="plait",
    help="A memory layer for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

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


def fail(message: str, *, code: int = 1) -> typer.Exit:
    """Print one line to stderr and exit with ``code``."""
    errors.print(f"plait: {message}", markup=False, highlight=False)
    raise typer.Exit(code)


@app.command()
def doctor(
    project: ProjectOption = None, data_dir: DataDirOption = None, json_output: JsonOption = False
) -> None:
    """Report hot tier, checkpointer, knowledge graph, LLM and embedder."""
    from plait.doctor import exit_code, run_checks

    settings = load_settings(project, data_dir)
    checks = asyncio.run(run_checks(settings))
    if json_output:
        typer.echo(json.dumps({"checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        table = Table("component", "status", "detail", title="plait doctor")
        colours = {"ok": "green", "degraded": "yellow", "unavailable": "red"}
        for check in checks:
            status = f"[{colours[check.status]}]{check.status}[/]"
            table.add_row(check.component, status, check.detail)
        console.print(table)
    raise typer.Exit(exit_code(checks))


def main() -> None:
    """Entry point."""
    app()


__all__ = ["app", "main"]
