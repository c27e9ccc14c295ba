"""The ``plait`` command line (typer): one module per group of commands."""

from __future__ import annotations

from plait.cli import (  # noqa: F401 (they register commands)
    bench,
    core,
    dlq,
    history,
    hosts,
    memory,
    opencode,
    service,
    token,
)
from plait.cli._common import app


def main() -> None:
    """Entry point."""
    app()


__all__ = ["app", "main"]
