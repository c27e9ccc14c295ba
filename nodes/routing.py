"""Tool routing for ``tool.execute.before``: keep big, unbounded output out of the context."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from plait.settings import HooksSettings
from plait.state.hooks import ToolPolicy

WEB_FETCH_TOOLS = frozenset({"webfetch", "web_fetch", "fetch"})
SHELL_TOOLS = frozenset({"bash", "shell"})
READ_TOOLS = frozenset({"read", "view"})
DOWNLOADER = re.compile(r"(?:^|[\s;&|(])(curl|wget)\s")


def decide_tool_policy(
    tool: str,
    args: dict[str, Any],
    settings: HooksSettings,
    *,
    file_size: int | None = None,
    already_nudged: bool = False,
) -> ToolPolicy:
    """Allow, nudge, redirect or deny one tool call, by the tool's name and arguments.

    ``file_size`` is the size of the file a read tool targets; a whole-file read over
    ``large_read_bytes`` is nudged once per session (``already_nudged`` says it was).
    """
    name = tool.lower()
    if name in WEB_FETCH_TOOLS and settings.deny_web_fetch:
        return ToolPolicy(
            action="deny",
            message="plait: unbounded web fetch is off; use session_fetch_and_index(url), "
            "which indexes the page and returns a bounded answer.",
        )
    command = str(args.get("command", ""))
    if name in SHELL_TOOLS and settings.redirect_curl and DOWNLOADER.search(command):
        return ToolPolicy(
            action="redirect",
            message="plait: use session_fetch_and_index(url) instead of curl/wget; "
            "it keeps the download out of the context and searchable.",
        )
    large = file_size is not None and file_size > settings.large_read_bytes > 0
    if name in READ_TOOLS and large and not already_nudged and "limit" not in args:
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
