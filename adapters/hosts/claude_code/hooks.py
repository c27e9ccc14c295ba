"""Claude Code's command hooks in, plait's intents out, and plait's answer as Claude Code's JSON.

The only place that knows Claude Code's hook events and tool names (checked against Claude
Code 2.1.331; see ``/docs/hosts.md``); the payload shape it shares with Codex is read in
:mod:`plait.adapters.hosts.command_hooks`. Context reaches the model on SessionStart,
UserPromptSubmit, PreToolUse and PostToolUse; the other events cannot inject. SessionStart's
context is cut by Claude Code near 10,000 characters: plait stays under it.
"""

from __future__ import annotations

from plait.adapters.hosts.command_hooks import (
    CommandHooks,
    stopped,
)

NAME = "claude-code"
SESSION_START_MAX = 9500
# Claude Code's tool names, as plait names tools (ToolResult.tool).
TOOLS = {
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Bash": "bash",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list",
    "Task": "task",
    "Agent": "task",
    "WebFetch": "webfetch",
    "WebSearch": "websearch",
    "TodoWrite": "todowrite",
}
HOOKS = CommandHooks(
    name=NAME,
    label="Claude Code",
    tools=TOOLS,
    caps={"SessionStart": SESSION_START_MAX},
)
EVENTS = HOOKS.readers
KEEP_EVENTS = HOOKS.keep
CLAUDE_CODE = HOOKS.adapter
COMMAND_HOST = HOOKS.wire
answer = HOOKS.answer
host_call = HOOKS.host_call
intents_of = HOOKS.intents_of
rebuild = HOOKS.rebuild
prompt = HOOKS.prompt
tool_after = HOOKS.tool_after

__all__ = [
    "CLAUDE_CODE",
    "COMMAND_HOST",
    "EVENTS",
    "KEEP_EVENTS",
    "NAME",
    "answer",
    "host_call",
    "intents_of",
    "prompt",
    "rebuild",
    "stopped",
    "tool_after",
]
