"""Tool routing for ``tool.execute.before``: nudge big, unbounded output out of the context."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from plait.state.base.settings import HooksSettings
from plait.state.hooks import ToolPolicy

WEB_FETCH_TOOLS = frozenset({"webfetch", "web_fetch", "fetch"})
SHELL_TOOLS = frozenset({"bash", "shell"})
READ_TOOLS = frozenset({"read", "view"})
DOWNLOADER = re.compile(r"(?:^|[\s;&|(])(curl|wget)\s")


FETCH_HINT = (
    "plait: session_fetch_and_index(url) fetches a page into this session's search index "
    "and answers briefly; find the parts you need with session_search."
)


def decide_tool_policy(
    tool: str,
    args: dict[str, Any],
    settings: HooksSettings,
    *,
    file_size: int | None = None,
    already_nudged: bool = False,
) -> ToolPolicy:
    """Allow, nudge or deny one tool call, by the tool's name and arguments.

    A nudge never stops the call: the host shows its message with the tool's output. Only a
    person's opt-in denies (``hooks.deny_web_fetch``). Each session is nudged once: web
    fetches and ``curl``/``wget`` toward ``session_fetch_and_index``, a whole-file read over
    ``large_read_bytes`` toward a range (``already_nudged`` says a nudge was given).
    """
    name = tool.lower()
    if name in WEB_FETCH_TOOLS and settings.deny_web_fetch:
        return ToolPolicy(
            action="deny",
            message="plait: web fetch is off here (hooks.deny_web_fetch); use "
            "session_fetch_and_index(url), which indexes the page and answers briefly.",
        )
    if already_nudged:
        return ToolPolicy()
    if name in WEB_FETCH_TOOLS and settings.nudge_web_fetch:
        return ToolPolicy(action="nudge", message=FETCH_HINT)
    command = str(args.get("command", ""))
    if name in SHELL_TOOLS and settings.nudge_curl and DOWNLOADER.search(command):
        return ToolPolicy(action="nudge", message=FETCH_HINT)
    large = file_size is not None and file_size > settings.large_read_bytes > 0
    if name in READ_TOOLS and large and "limit" not in args:
        return ToolPolicy(
            action="nudge",
            message=f"plait: this file is {file_size} bytes; read a range (offset/limit), or "
            "session_index it and session_search it.",
        )
    return ToolPolicy()


def target_file_size(args: dict[str, Any]) -> int | None:
    """Size of the file a read tool's arguments name, if it is a readable file."""
    path = args.get("filePath") or args.get("path") or args.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    try:
        return Path(path).stat().st_size
    except OSError:
        return None


__all__ = ["decide_tool_policy", "target_file_size"]
