"""OpenCode's past sessions of a project, read from OpenCode's own database.

OpenCode (1.18) keeps its sessions in SQLite at ``$XDG_DATA_HOME/opencode/opencode.db``
(``~/.local/share/opencode/opencode.db``): ``session`` (its directory and parent), ``message``
(role, and ``summary`` on a compaction's summary) and ``part`` (text, tool calls with their
state). Each part is read the way the plugin's hooks would have carried it, through the same
readers (``chat.message``, ``tool.execute.after``, a finished text part, a failed tool), so an
imported session becomes the same events a live one would have. The database is opened read-only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.adapters.hosts.opencode.hooks import chat_message, failed_tool, part_updated, tool_after
from plait.state.base.errors import PlaitError
from plait.state.history import PastCall, Skipped
from plait.state.intents import CompactionSummary, Intent


def opencode_database(environ: Mapping[str, str] = os.environ) -> Path:
    """Where OpenCode keeps its database for this user."""
    data = environ.get("XDG_DATA_HOME") or str(
        Path(environ.get("HOME", "~")).expanduser() / ".local/share"
    )
    return Path(data) / "opencode" / "opencode.db"


@dataclass
class OpenCodeHistory:
    """The past OpenCode sessions whose directory is the project (or inside it)."""

    database: Path
    project_dir: Path
    host: str = "opencode"

    def _connect(self) -> sqlite3.Connection:
        if not self.database.is_file():
            raise PlaitError(f"no OpenCode database at {str(self.database)!r}")
        return sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)

    def _in_project(self, directory: str) -> bool:
        root = os.path.realpath(self.project_dir)
        real = os.path.realpath(directory)
        return real == root or real.startswith(root + os.sep)

    def sessions(self) -> list[str]:
        """The project's sessions, oldest first."""
        with self._connect() as db:
            rows = db.execute("SELECT id, directory FROM session ORDER BY time_created, id")
            return [sid for sid, directory in rows if self._in_project(directory)]

    def calls(self) -> Iterator[PastCall | Skipped]:
        """Every part of the project's sessions, oldest first, as plait's intents."""
        wanted = set(self.sessions())
        with self._connect() as db:
            parents = dict(db.execute("SELECT id, parent_id FROM session").fetchall())
            rows = db.execute(
                "SELECT p.id, p.session_id, p.data, m.data FROM part p "
                "JOIN message m ON m.id = p.message_id ORDER BY p.time_created, p.id"
            )
            for part_id, session_id, part_data, message_data in rows:
                if session_id not in wanted:
                    continue
                where = f"{self.database.name}: part {part_id}"
                try:
                    intents = intents_of(json.loads(part_data), json.loads(message_data))
                except (ValueError, PlaitError) as error:
                    yield Skipped(where=where, reason=str(error).splitlines()[0][:200])
                    continue
                if intents:
                    yield PastCall(
                        session_id=session_id,
                        parent_id=parents.get(session_id),
                        call_id=f"import:opencode:{part_id}",
                        intents=tuple(intents),
                    )


def intents_of(part: Any, message: Any) -> list[Intent]:
    """One stored part, read as the hook that carried it live would have read it."""
    if not isinstance(part, dict) or not isinstance(message, dict):
        raise ValueError("a part or its message is not a JSON object")
    kind, role = part.get("type"), message.get("role")
    if role == "user" and kind == "text" and not part.get("synthetic"):
        return chat_message({}, {"parts": [part]})
    if role == "assistant" and kind == "text" and message.get("summary"):
        return [CompactionSummary(text=str(part.get("text") or ""))]
    if role == "assistant" and kind == "text":
        finished = {**part, "time": {"end": 1, **(part.get("time") or {})}}
        return part_updated("message.part.updated", {"part": finished})
    if kind == "tool":
        return tool_intents(part)
    return []


def tool_intents(part: Mapping[str, Any]) -> list[Intent]:
    """A tool part: a finished call as ``tool.execute.after`` carries it, a failed one as such."""
    found = part.get("state")
    state: Mapping[str, Any] = found if isinstance(found, dict) else {}
    if state.get("status") == "error":
        return failed_tool(part)
    if state.get("status") != "completed":
        return []
    call = {"tool": part.get("tool") or "tool", "args": state.get("input") or {}}
    return tool_after(
        call, {"output": state.get("output") or "", "metadata": state.get("metadata") or {}}
    )


__all__ = ["OpenCodeHistory", "intents_of", "opencode_database"]
