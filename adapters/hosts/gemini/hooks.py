"""Gemini CLI's command hooks in, plait's intents out, and plait's answer as Gemini CLI reads it.

The only place that knows Gemini CLI's hook events and tool names (checked against Gemini CLI
0.61.0; see ``/docs/hosts.md``). The payload carries ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name`` and ``timestamp`` like the hosts of
:mod:`plait.adapters.hosts.command_hooks`; the events differ:

- SessionStart (``source``), BeforeAgent (``prompt``), BeforeTool / AfterTool (``tool_name``,
  ``tool_input``, ``tool_response`` with ``llmContent``), AfterAgent (``prompt_response``),
  SessionEnd.
- PreCompress is left out: Gemini CLI 0.61.0 fires it before every turn, compressing or not,
  so it cannot mark a compaction; memory comes back with the next prompt's context anyway.

Context (``additionalContext``) is added to the user's turn on SessionStart and BeforeAgent,
and to the tool's result on AfterTool, HTML-escaped inside ``<hook_context>``; in a headless
run SessionStart's context is folded into the prompt itself, so a prompt is read without it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from plait.adapters.hosts.command_hooks import CommandHooks

NAME = "gemini"
HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.DOTALL)
TOOLS = {
    "run_shell_command": "bash",
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "replace": "edit",
    "glob": "glob",
    "search_file_content": "grep",
    "grep_search": "grep",
    "list_directory": "list",
    "web_fetch": "webfetch",
    "google_web_search": "websearch",
    "write_todos": "todowrite",
}


def prompt_of(payload: Mapping[str, Any]) -> Any:
    """The user's words: the prompt without the context hooks folded into it."""
    text = payload.get("prompt", "")
    return HOOK_CONTEXT.sub("", text).strip() if isinstance(text, str) else text


def deny(action: str, message: str) -> dict[str, Any]:
    """A denied tool call as Gemini CLI reads it (the reason goes to the agent); else nothing."""
    return {"decision": "deny", "reason": message} if action == "deny" else {}


HOOKS = CommandHooks(
    name=NAME,
    label="Gemini CLI",
    events={
        "SessionStart": "session_start",
        "BeforeAgent": "prompt",
        "BeforeTool": "tool_before",
        "AfterTool": "tool_after",
        "AfterAgent": "stopped",
        "SessionEnd": "ended",
    },
    tools=TOOLS,
    keep=frozenset({"BeforeAgent", "AfterTool", "AfterAgent"}),
    injecting=frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
    prompt_of=prompt_of,
    deny=deny,
)
EVENTS = HOOKS.readers
KEEP_EVENTS = HOOKS.keep
COMMAND_HOST = HOOKS.wire

__all__ = ["COMMAND_HOST", "EVENTS", "HOOKS", "KEEP_EVENTS", "NAME", "TOOLS", "prompt_of"]
