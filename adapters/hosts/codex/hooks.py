"""Codex's command hooks in, plait's intents out, and plait's answer as Codex reads it.

The only place that knows Codex's hook events and tool names (checked against Codex 0.169.0;
see ``/docs/hosts.md``). Codex sends the payload shape Claude Code introduced (read in
:mod:`plait.adapters.hosts.command_hooks`) plus ``turn_id`` and ``model``; a shell call is
``Bash`` with ``tool_input.command`` and its output as a string, an edit is ``apply_patch``
with the patch. Context (``additionalContext``) reaches the model as a separate developer
message on SessionStart, UserPromptSubmit, PreToolUse and PostToolUse; after a compaction the
earlier prompts' context is gone, so memory comes back through SessionStart ``compact``.
"""

from __future__ import annotations

from plait.adapters.hosts.command_hooks import (
    CommandHooks,
)

NAME = "codex"
# Codex's tool names, as plait names tools (an MCP tool, ``mcp__server__tool``, keeps its own).
TOOLS = {
    "Bash": "bash",
    "exec_command": "bash",
    "apply_patch": "patch",
    "Edit": "edit",
    "Write": "write",
    "Read": "read",
    "update_plan": "todowrite",
    "web_search": "websearch",
}
# Codex's names for its events in trust keys (``<file>:<label>:<group>:<hook>``).
LABELS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "SessionEnd": "session_end",
}
HOOKS = CommandHooks(
    name=NAME,
    label="Codex",
    tools=TOOLS,
)
EVENTS = HOOKS.readers
KEEP_EVENTS = HOOKS.keep
COMMAND_HOST = HOOKS.wire

__all__ = ["COMMAND_HOST", "EVENTS", "HOOKS", "KEEP_EVENTS", "LABELS", "NAME", "TOOLS"]
