"""``plait doctor``'s checks of the Claude Code integration: hooks, MCP entry, commands on PATH.

Not being installed for Claude Code is said plainly and does not fail; an install that is
broken fails: hooks missing for some events, plait's hooks in both the project's and the user's
settings (every hook would run twice), no MCP entry, ``plait-hook`` or ``plait`` not on PATH.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plait.adapters.hosts.claude_code.hooks import EVENTS
from plait.adapters.hosts.claude_code.install import MCP_KEY, is_plaits, paths_for
from plait.adapters.hosts.opencode import jsonc
from plait.adapters.hosts.opencode.health import check, hook_command_check, mcp_entry_check
from plait.doctor import Check
from plait.state.base.errors import PlaitError

BOTH = ".mcp.json and ~/.claude.json"


def read_object(path: Path) -> dict[str, Any]:
    """A settings file's object ({} when missing or unreadable)."""
    try:
        return jsonc.loads(path.read_text(encoding="utf-8"), str(path)) if path.exists() else {}
    except (PlaitError, OSError):
        return {}


def hooked_events(settings: dict[str, Any]) -> set[str]:
    """The events a settings object runs plait's hook on."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return set()
    return {
        event
        for event, groups in hooks.items()
        if isinstance(groups, list) and any(is_plaits(group) for group in groups)
    }


def hooks_check(project: dict[str, set[str]]) -> Check:
    """Plait's hooks on every event, in one scope only."""
    scopes = [scope for scope, events in project.items() if events]
    if len(scopes) > 1:
        detail = "plait's hooks are in both the project's and your settings: every hook runs twice"
        return check("claude-code hooks", "unavailable", detail + "; uninstall one", True)
    missing = sorted(set(EVENTS) - project[scopes[0]])
    if missing:
        detail = f"no plait hook on {', '.join(missing)}: plait claude-code install"
        return check("claude-code hooks", "unavailable", detail, True)
    ok = f"{len(EVENTS)} events ({scopes[0]})"
    return hook_command_check("claude-code hooks", "Claude Code", ok)


def claude_code_checks(project_dir: Path) -> list[Check]:
    """Every check of the Claude Code integration for a project."""
    events: dict[str, set[str]] = {}
    entries: list[dict[str, Any]] = []
    for scope, global_ in (("project", False), ("user", True)):
        settings, servers = paths_for(project_dir, global_)
        events[scope] = hooked_events(read_object(settings))
        entry = read_object(servers).get("mcpServers", {})
        if isinstance(entry, dict) and isinstance(entry.get(MCP_KEY), dict):
            entries.append(entry[MCP_KEY])
    if not any(events.values()) and not entries:
        detail = "not installed for this project or user: plait claude-code install"
        return [check("claude-code", "unavailable", detail, False)]
    if not any(events.values()):
        return [check("claude-code hooks", "unavailable", "no hooks: install", True)]
    return [hooks_check(events), mcp_entry_check("claude-code mcp", entries, "Claude Code", BOTH)]


__all__ = ["claude_code_checks"]
