"""Codex's past sessions of a project, read from its rollout files.

Codex keeps each session as JSON lines in ``<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl``.
The first line is ``session_meta`` (``payload.id``, ``payload.cwd``): a session belongs to the
project its ``cwd`` is in. Then ``response_item`` lines carry what the model saw and said
(``payload.type`` ``message`` with ``role`` ``user``, ``assistant`` or ``developer``;
``function_call`` / ``custom_tool_call`` and their ``…_output``), and ``compacted`` a
compaction's summary. Developer messages (Codex's instructions, and context hooks added) and
the user-role blocks Codex writes itself (``<environment_context>`` …) are left out. Each record
is read the way the hooks would have carried it (:mod:`.hooks`), so an imported session becomes
the events a live one would have. A line that is not a record is skipped, named.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from plait.adapters.hosts.codex.hooks import HOOKS, NAME
from plait.adapters.hosts.codex.install import codex_home
from plait.adapters.hosts.command_hooks import stopped
from plait.adapters.hosts.transcripts import transcript_calls
from plait.state.base.errors import PlaitError
from plait.state.history import PastCall, Skipped
from plait.state.intents import CompactionSummary, Intent

CALLS = ("function_call", "custom_tool_call")
# a user-role message that is one block Codex wrote itself (``<environment_context>…``)
CODEX_BLOCK = re.compile(r"^<([a-z_]+)[^>]*>.*</\1>$", re.DOTALL)
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def sessions_dir(home: Path | None = None) -> Path:
    """Where Codex keeps every session of this user."""
    return (home or codex_home()) / "sessions"


def first_record(path: Path) -> dict[str, Any]:
    """A rollout's first line ({} when it is not a JSON object)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            record = json.loads(lines.readline() or "{}")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def within(cwd: Any, project: Path) -> bool:
    """Whether a session's working directory is the project or inside it."""
    if not isinstance(cwd, str) or not cwd:
        return False
    path = Path(cwd)
    return path == project or project in path.parents


@dataclass
class CodexHistory:
    """The project's past Codex sessions, one rollout file each."""

    folder: Path
    project_dir: Path
    host: str = NAME
    found: list[tuple[str, Path]] = field(default_factory=list, init=False)

    def files(self) -> list[tuple[str, Path]]:
        """The project's rollouts (session id, file), oldest first."""
        if self.found:
            return self.found
        if not self.folder.is_dir():
            raise PlaitError(f"no Codex sessions at {str(self.folder)!r}")
        project = self.project_dir.resolve()
        for path in sorted(self.folder.rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime):
            meta = first_record(path)
            payload = meta.get("payload") if meta.get("type") == "session_meta" else None
            if isinstance(payload, dict) and within(payload.get("cwd"), project):
                self.found.append((str(payload.get("id") or path.stem), path))
        return self.found

    def sessions(self) -> list[str]:
        """The project's sessions, oldest first."""
        return [session for session, _ in self.files()]

    def calls(self) -> Iterator[PastCall | Skipped]:
        """Every record of every rollout, in order, as plait's intents."""
        for session, path in self.files():
            tools: dict[str, dict[str, Any]] = {}

            def identify(
                _: Any, number: int, where: str, session: str = session
            ) -> tuple[str, str]:
                return session, f"import:{NAME}:{session}:{number}"

            yield from transcript_calls(path, partial(intents_of, tools=tools), identify)


def intents_of(record: Any, tools: dict[str, dict[str, Any]]) -> list[Intent]:
    """One rollout line; ``tools`` remembers the tool calls their outputs will name."""
    if not isinstance(record, dict):
        raise ValueError("a line is not a JSON object")
    payload = record.get("payload")
    if record.get("type") == "compacted" and isinstance(payload, dict):
        return [CompactionSummary(text=str(payload.get("message", "")))]
    if record.get("type") != "response_item" or not isinstance(payload, dict):
        return []
    kind = payload.get("type")
    if kind == "message":
        return message(payload)
    if kind in CALLS:
        tools[str(payload.get("call_id", ""))] = {
            "tool_name": payload.get("name") or "tool",
            "tool_input": arguments(payload),
        }
        return []
    call = tools.pop(str(payload.get("call_id", "")), None) if kind in OUTPUTS else None
    if call is None:
        return []
    return HOOKS.tool_after(call | {"tool_response": output_text(payload.get("output"))})


def message(payload: dict[str, Any]) -> list[Intent]:
    """A person's prompt or the model's answer (developer messages are Codex's own)."""
    content = payload.get("content")
    parts: list[Any] = content if isinstance(content, list) else []
    text = "\n".join(
        str(part.get("text", ""))
        for part in parts
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text")
    ).strip()
    if not text:
        return []
    if payload.get("role") == "user" and not CODEX_BLOCK.match(text):
        return HOOKS.prompt({"prompt": text})[:1]
    if payload.get("role") == "assistant":
        return stopped({"last_assistant_message": text})[:-1]
    return []


def arguments(payload: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments: a function's JSON object, a custom tool's raw input."""
    raw = payload.get("arguments")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return {"command": parsed["cmd"], **parsed} if "cmd" in parsed else parsed
    text = payload.get("input")
    return {"input": text} if isinstance(text, str) else {}


def output_text(output: Any) -> str:
    """A tool output's text (a text, or ``{"output": …}`` / content blocks)."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return str(output.get("output") or output.get("content") or json.dumps(output))
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    return ""


__all__ = ["CodexHistory", "intents_of", "sessions_dir"]
