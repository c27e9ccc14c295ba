"""``plait opencode``: the OpenCode integration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli._common import (
    ProjectOption,
    app,
    console,
    fail,
)
from plait.errors import PlaitError

if TYPE_CHECKING:
    pass

opencode_app = typer.Typer(help="OpenCode integration.", no_args_is_help=True)
app.add_typer(opencode_app, name="opencode")


@opencode_app.command("install")
def opencode_install(
    project: ProjectOption = None,
    global_: Annotated[
        bool, typer.Option("--global", help="Install for the user, not the project.")
    ] = False,
) -> None:
    """Write the plugin and the MCP entry into opencode.json (the project's, or the user's)."""
    from plait.adapters.hosts.opencode import install_opencode

    try:
        written = install_opencode((project or Path.cwd()).resolve(), global_=global_)
    except PlaitError as error:
        fail(str(error))
    for path in written:
        console.print(f"wrote {path}")
