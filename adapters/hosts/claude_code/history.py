"""Claude Code's past sessions of a project, read from its transcripts.

Claude Code keeps each session as JSON lines in ``~/.claude/projects/<slug>/<session>.jsonl``,
``<slug>`` the project's path with every character but letters and digits made ``-``. A line is
one record: ``type`` ``user`` or ``assistant`` with ``message`` (``role``, ``content``: a text
or blocks ``text``, ``tool_use``, ``tool_result``), ``sessionId``, ``uuid``; ``isMeta`` marks
what Claude Code wrote itself, ``isCompactSummary`` a compaction's summary. Each record is read
the way the hooks would have carried it (the same readers as :mod:`.hooks`), so an imported
session becomes the events a live one would have. A line that is not a record is skipped, named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from plait.adapters.hosts.claude_code.hooks import NAME, prompt, stopped, tool_after
from plait.adapters.hosts.transcripts import transcript_calls
from plait.state.base.errors import PlaitError
from plait.state.history import PastCall, Skipped
from plait.state.intents import CompactionSummary, Intent

SLUG = re.compile(r"[^A-Za-z0-9]")


def transcripts_dir(project_dir: Path, home: Path | None = None) -> Path:
    """Where Claude Code keeps the project's transcripts for this user."""
    slug = SLUG.sub("-", str(project_dir.resolve()))
    return (home or Path.home()) / ".claude" / "projects" / slug


def blocks(message: Any) -> list[dict[str, Any]]:
    """A message's content as blocks (a bare text becomes one text block)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


@dataclass
class ClaudeCodeHistory:
    """The project's past Claude Code sessions, one transcript file each."""

    folder: Path
    host: str = NAME

    def files(self) -> list[Path]:
        """The transcripts, oldest first."""
        if not self.folder.is_dir():
            raise PlaitError(f"no Claude Code transcripts at {str(self.folder)!r}")
        return sorted(self.folder.glob("*.jsonl"), key=lambda path: path.stat().st_mtime)

    def sessions(self) -> list[str]:
        """The project's sessions, oldest first (a transcript is named after its session)."""
        return [path.stem for path in self.files()]

    def calls(self) -> Iterator[PastCall | Skipped]:
        """Every record of every transcript, in order, as plait's intents."""
        for path in self.files():
            tools: dict[str, dict[str, Any]] = {}

            def identify(
                record: Any, number: int, where: str, path: Path = path
            ) -> tuple[str, str]:
                session = str(record.get("sessionId") or path.stem)
                return session, f"import:{NAME}:{record.get('uuid') or where}"

            yield from transcript_calls(path, partial(intents_of, tools=tools), identify)


def intents_of(record: Any, tools: dict[str, dict[str, Any]]) -> list[Intent]:
    """One transcript record; ``tools`` remembers the tool calls their results will name."""
    if not isinstance(record, dict):
        raise ValueError("a line is not a JSON object")
    kind, message = record.get("type"), record.get("message")
    if kind == "user" and record.get("isCompactSummary"):
        return [CompactionSummary(text=text_of(message))]
    if kind == "user" and not record.get("isMeta"):
        return user_record(message, tools)
    if kind == "assistant":
        return assistant_record(message, tools)
    return []


def text_of(message: Any) -> str:
    """The text blocks of a message, joined."""
    return "\n".join(str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text")


def user_record(message: Any, tools: dict[str, dict[str, Any]]) -> list[Intent]:
    """A person's prompt, or the results of the tool calls the model made."""
    intents: list[Intent] = []
    for block in blocks(message):
        call = tools.pop(str(block.get("tool_use_id", "")), None)
        if block.get("type") == "tool_result" and call is not None:
            response = {
                "content": result_text(block.get("content")),
                "is_error": block.get("is_error"),
            }
            intents += tool_after(call | {"tool_response": response})
    text = text_of(message)
    return intents + (prompt({"prompt": text}) if text.strip() else [])[:1]


def result_text(content: Any) -> str:
    """A tool result's text (a text or text blocks)."""
    if isinstance(content, str):
        return content
    return text_of({"content": content if isinstance(content, list) else []})


def assistant_record(message: Any, tools: dict[str, dict[str, Any]]) -> list[Intent]:
    """The model's text, and its tool calls (kept until their results come)."""
    for block in blocks(message):
        if block.get("type") == "tool_use":
            tools[str(block.get("id", ""))] = {
                "tool_name": block.get("name"),
                "tool_input": block.get("input") or {},
            }
    text = text_of(message)
    return stopped({"last_assistant_message": text})[:-1] if text.strip() else []


__all__ = ["ClaudeCodeHistory", "intents_of", "transcripts_dir"]
