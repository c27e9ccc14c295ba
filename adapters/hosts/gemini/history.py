"""Gemini CLI's past sessions of a project, read from its chat files.

Gemini CLI names each project in ``~/.gemini/projects.json`` (``{"projects": {path: name}}``)
and keeps its sessions as JSON lines in ``~/.gemini/tmp/<name>/chats/session-*.jsonl``: a first
line with ``sessionId``, then records with ``type`` ``user`` (``content``: text parts) or
``gemini`` (``content``: the answer, ``toolCalls``: each ``name``, ``args``, ``result``), and
``$set`` lines that update the file's metadata. The ``<session_context>`` block Gemini CLI
writes itself and the ``<hook_context>`` hooks added are left out. Each record is read the way
the hooks would have carried it (:mod:`.hooks`). A line that is not a record is skipped, named.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.adapters.hosts.command_hooks import stopped
from plait.adapters.hosts.gemini.hooks import HOOKS, NAME, prompt_of
from plait.adapters.hosts.gemini.install import gemini_home
from plait.adapters.hosts.transcripts import transcript_calls
from plait.state.base.errors import PlaitError
from plait.state.history import PastCall, Skipped
from plait.state.intents import Intent

OWN_BLOCK = "<session_context>"


def chats_dir(project_dir: Path, home: Path | None = None) -> Path:
    """Where Gemini CLI keeps the project's sessions (named in its ``projects.json``)."""
    base = home or gemini_home()
    try:
        projects = json.loads((base / "projects.json").read_text(encoding="utf-8"))["projects"]
        name = projects[str(project_dir.resolve())]
    except (OSError, ValueError, KeyError, TypeError):
        name = project_dir.resolve().name
    return base / "tmp" / str(name) / "chats"


@dataclass
class GeminiHistory:
    """The project's past Gemini CLI sessions, one chat file each."""

    folder: Path
    host: str = NAME

    def files(self) -> list[Path]:
        """The chat files, oldest first."""
        if not self.folder.is_dir():
            raise PlaitError(f"no Gemini CLI sessions at {str(self.folder)!r}")
        return sorted(self.folder.glob("session-*.jsonl"), key=lambda path: path.stat().st_mtime)

    def sessions(self) -> list[str]:
        """The project's sessions, oldest first."""
        return [session_of(path) for path in self.files()]

    def calls(self) -> Iterator[PastCall | Skipped]:
        """Every record of every chat file, in order, as plait's intents."""
        for path in self.files():
            session = session_of(path)

            def identify(
                record: Any, number: int, where: str, session: str = session
            ) -> tuple[str, str]:
                return session, f"import:{NAME}:{session}:{record.get('id') or number}"

            yield from transcript_calls(path, intents_of, identify)


def session_of(path: Path) -> str:
    """A chat file's session id (its first line's ``sessionId``, else the file's name)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            first = json.loads(lines.readline() or "{}")
    except (OSError, ValueError):
        first = {}
    session = first.get("sessionId") if isinstance(first, dict) else None
    return str(session or path.stem)


def intents_of(record: Any) -> list[Intent]:
    """One chat record: a person's prompt, or the model's answer and tool calls."""
    if not isinstance(record, dict):
        raise ValueError("a line is not a JSON object")
    kind, content = record.get("type"), record.get("content")
    if kind == "user":
        parts = content if isinstance(content, list) else [{"text": content}]
        text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)).strip()
        if text.startswith(OWN_BLOCK) or not prompt_of({"prompt": text}):
            return []
        return HOOKS.prompt({"prompt": text})[:1]
    if kind != "gemini":
        return []
    intents: list[Intent] = []
    for call in record.get("toolCalls") or []:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            response = {"llmContent": result_text(call.get("result"))}
            if call.get("status") == "error":
                response["error"] = "failed"
            tool = {"tool_name": call["name"], "tool_input": call.get("args") or {}}
            intents += HOOKS.tool_after(tool | {"tool_response": response})
    text = content if isinstance(content, str) else ""
    return intents + (stopped({"prompt_response": text})[:-1] if text.strip() else [])


def result_text(result: Any) -> str:
    """A tool call's result as text (Gemini's function response parts, or whatever it holds)."""
    if isinstance(result, str):
        return result
    texts: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        response = (
            part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        )
        value = response.get("output", response) if isinstance(response, dict) else part
        texts.append(value if isinstance(value, str) else json.dumps(value, default=str))
    return "\n".join(texts)


__all__ = ["GeminiHistory", "chats_dir", "intents_of"]
