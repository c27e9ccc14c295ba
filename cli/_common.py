"""What every ``plait`` command shares: the app, its options, settings loading, failing."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.state.base.settings import Settings

app = typer.Typer(
    name="plait",
    help="A memory layer for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class LazyConsole:
    """rich's ``Console``, made on first use: ``plait --help`` never loads rich."""

    def __init__(self) -> None:
        self._console: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            # a line is never cut where the console is narrow: paths and URLs stay whole when
            # copied or read by a script (a terminal still wraps what it shows)
            self._console = Console(soft_wrap=True)
        return getattr(self._console, name)


console: Any = LazyConsole()

ProjectOption = Annotated[
    Path | None, typer.Option("--project", "-p", help="Project directory (default: here).")
]
DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Where plait keeps its data.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def load_settings(project: Path | None, data_dir: Path | None) -> Settings:
    """Settings for the command, or exit 2 with the one-line reason."""
    from plait.state.base.settings import Settings

    overrides = {"data_dir": data_dir} if data_dir is not None else {}
    try:
        return Settings.load(project, **overrides)
    except PlaitError as error:
        fail(str(error), code=2)


def run[T](work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on uvloop's event loop, imported when a command runs (not for ``--help``).

    uvloop (libuv) runs the service's sockets, tasks and callbacks for less CPU than asyncio's
    own loop; where it is not installed (it does not build on Windows) asyncio's loop runs.
    """
    import asyncio

    try:
        import uvloop
    except ImportError:
        return asyncio.run(work)
    return asyncio.run(work, loop_factory=uvloop.new_event_loop)


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
    "run",
]
