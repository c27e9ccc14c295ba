"""``plait import-history``: a project's past sessions of a coding agent, into plait's memory.

Each host's reader (``opencode``: OpenCode's own database) yields the records of the project's
past sessions in order; each is recorded through the hooks graph as if it happened now, so it
becomes the same events a live session would have, redacted the same way, and drains into the
recall index and the knowledge graph. Every record carries an id of its own, so a second run
records nothing again. A record that cannot be read is named and skipped; the rest go on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from plait.cli import _common as cli
from plait.state.base.errors import PlaitError

if TYPE_CHECKING:
    from plait.memory import Memory
    from plait.state.history import HistoryReader, Skipped

Host = Literal["opencode", "claude-code", "codex", "gemini"]
SKIPPED_SHOWN = 20


def reader_for(host: Host, project_dir: Path, source: Path | None) -> HistoryReader:
    """The reader of ``host``'s records for the project (``source``: where they are kept)."""
    from plait.adapters.hosts.claude_code.history import ClaudeCodeHistory, transcripts_dir
    from plait.adapters.hosts.codex.history import CodexHistory, sessions_dir
    from plait.adapters.hosts.gemini.history import GeminiHistory, chats_dir
    from plait.adapters.hosts.opencode.history import OpenCodeHistory, opencode_database

    if host == "claude-code":
        return ClaudeCodeHistory(folder=source or transcripts_dir(project_dir))
    if host == "codex":
        return CodexHistory(folder=source or sessions_dir(), project_dir=project_dir)
    if host == "gemini":
        return GeminiHistory(folder=source or chats_dir(project_dir))
    return OpenCodeHistory(database=source or opencode_database(), project_dir=project_dir)


async def import_calls(
    memory: Memory, reader: HistoryReader, *, progress: bool
) -> tuple[int, int, list[Skipped]]:
    """Record every past call; the sessions seen, the events added and what was skipped."""
    from rich.console import Console
    from rich.progress import Progress

    from plait.state.history import PastCall
    from plait.state.intents import HostAdapter, HostCall, SessionTarget

    host = HostAdapter(name=reader.host)
    sessions = reader.sessions()
    before = {s: await memory.backends.store.event_count(s) for s in sessions}
    skipped: list[Skipped] = []
    with Progress(console=Console(stderr=True), disable=not progress, transient=True) as bar:
        task = bar.add_task(f"{reader.host} sessions", total=None)
        for item in reader.calls():
            if not isinstance(item, PastCall):
                skipped.append(item)
                continue
            target = SessionTarget(session_id=item.session_id, parent_id=item.parent_id)
            call = HostCall(
                host=host, target=target, payload=list(item.intents), call_id=item.call_id
            )
            await memory.dispatch.run(call)
            bar.advance(task)
    added = 0
    for session, count in before.items():
        added += await memory.backends.store.event_count(session) - count
    return len(sessions), added, skipped


@cli.app.command("import-history")
def import_history(
    host: Annotated[Host, typer.Option(help="Whose past sessions to read.")] = "opencode",
    source: Annotated[
        Path | None,
        typer.Option(help="Where the host keeps them (default: its usual place for this user)."),
    ] = None,
    project: cli.ProjectOption = None,
    data_dir: cli.DataDirOption = None,
    json_output: cli.JsonOption = False,
) -> None:
    """Import the project's past sessions of a coding agent (idempotent: again adds nothing)."""
    from plait.memory import Memory

    settings = cli.load_settings(project, data_dir)
    project_dir = (project or Path.cwd()).resolve()
    reader = reader_for(host, project_dir, source)

    async def work() -> tuple[int, int, list[Skipped]]:
        async with Memory.open(project_dir, settings=settings, start_background=False) as memory:
            found = await import_calls(memory, reader, progress=not json_output)
            if memory.background is not None:
                await memory.background.drain_until_empty()
            return found

    try:
        sessions, added, skipped = cli.run(work())
    except PlaitError as error:
        cli.fail(str(error), code=2)
    if json_output:
        rows = [{"where": s.where, "reason": s.reason} for s in skipped]
        typer.echo(json.dumps({"sessions": sessions, "events_added": added, "skipped": rows}))
        return
    cli.console.print(f"{host}: {sessions} sessions, {added} events added, {len(skipped)} skipped")
    for item in skipped[:SKIPPED_SHOWN]:
        cli.console.print(f"  skipped {item.where}: {item.reason}", markup=False)
