"""``plait doctor``'s checks of the Gemini CLI integration: extension, hooks, MCP entry, PATH.

Not being installed for Gemini CLI is said plainly and does not fail; an install that is broken
fails: hooks missing for some events, hooks switched off (``hooksConfig.enabled = false``), no
MCP entry in the extension, ``plait-hook`` or ``plait`` not on PATH.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plait.adapters.hosts.gemini.hooks import EVENTS
from plait.adapters.hosts.gemini.install import (
    MCP_KEY,
    extension_dir,
    hook_command,
    hooks_enabled,
    settings_path,
)
from plait.adapters.hosts.opencode.health import check, hook_command_check, mcp_entry_check
from plait.doctor import Check
from plait.state.base.errors import PlaitError


def read_json(path: Path) -> dict[str, Any]:
    """A JSON file's object ({} when missing or unreadable: the checks say what is missing)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def hooked(hooks: dict[str, Any]) -> set[str]:
    """The events whose groups run plait's hook command."""
    events = hooks.get("hooks")
    if not isinstance(events, dict):
        return set()
    return {
        event
        for event, groups in events.items()
        if event in EVENTS
        and isinstance(groups, list)
        and any(
            isinstance(hook, dict) and hook.get("command") == hook_command(event)
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for hook in group["hooks"]
        )
    }


def gemini_checks(project_dir: Path) -> list[Check]:
    """Every check of the Gemini CLI integration (a user-level extension)."""
    folder = extension_dir()
    if not folder.exists():
        detail = "not installed for your user: plait gemini install"
        return [check("gemini", "unavailable", detail, False)]
    missing = sorted(set(EVENTS) - hooked(read_json(folder / "hooks" / "hooks.json")))
    try:
        enabled = hooks_enabled(settings_path().read_text() if settings_path().exists() else "")
    except (PlaitError, OSError):
        enabled = None
    if missing:
        detail = f"no plait hook on {', '.join(missing)}: plait gemini install"
        hooks = check("gemini hooks", "unavailable", detail, True)
    elif enabled is False:
        detail = "hooks are switched off (hooksConfig.enabled = false in ~/.gemini/settings.json)"
        hooks = check("gemini hooks", "unavailable", detail, True)
    else:
        ok = f"{len(EVENTS)} events (extension plait)"
        hooks = hook_command_check("gemini hooks", "Gemini CLI", ok)
    servers = read_json(folder / "gemini-extension.json").get("mcpServers")
    entry = servers.get(MCP_KEY) if isinstance(servers, dict) else None
    entries = [entry] if isinstance(entry, dict) else []
    mcp = mcp_entry_check("gemini mcp", entries, "Gemini CLI", "")
    return [hooks, mcp]


__all__ = ["gemini_checks"]
