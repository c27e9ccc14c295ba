"""``plait claude-code install`` / ``uninstall``: hooks and MCP entry where Claude Code reads them.

Project install (default) changes files a team commits, so they name no path of this machine:
    ``.claude/settings.json``  ``hooks.<Event>``: one group per event running
                               ``plait-hook claude-code <Event> [--keep]`` (found through PATH)
    ``.mcp.json``              ``mcpServers.plait`` = ``plait mcp``
Global install (``global_=True``): the hooks in ``~/.claude/settings.json``, the MCP entry in
``~/.claude.json`` (Claude Code's user-scope servers). The user's other settings, hooks and
comments stay as written; a file plait cannot read is refused before anything is written; a
changed file is backed up first (``<data_dir>/backups/claude-code/``). Uninstall takes out
exactly plait's groups and entry (then an emptied ``hooks`` or ``mcpServers``, then a file that
held only plait's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plait.adapters.hosts import config_files as files
from plait.adapters.hosts.claude_code.hooks import EVENTS, KEEP_EVENTS, NAME
from plait.adapters.hosts.command_hooks import HOOK_COMMAND
from plait.adapters.hosts.opencode import jsonc
from plait.state.base.errors import ConfigError

HOOK_TIMEOUT_S = 10
MCP_KEY = "plait"
MCP_ENTRY: dict[str, Any] = {"type": "stdio", "command": "plait", "args": ["mcp"]}
# Events that take a matcher (a tool name, a SessionStart source, a compaction trigger).
MATCHED = frozenset({"PreToolUse", "PostToolUse", "SessionStart", "PreCompact"})


def hook_group(event: str) -> dict[str, Any]:
    """Plait's group for one event: the hook client, with ``--keep`` where the call records."""
    command = f"{HOOK_COMMAND} {NAME} {event}" + (" --keep" if event in KEEP_EVENTS else "")
    group: dict[str, Any] = {"matcher": "*"} if event in MATCHED else {}
    return group | {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}


def is_plaits(group: Any) -> bool:
    """Whether a hook group is one plait installed (its command is ``plait-hook claude-code``)."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(hook, dict)
        and str(hook.get("command", "")).startswith(f"{HOOK_COMMAND} {NAME} ")
        for hook in hooks
    )


def paths_for(project: Path, global_: bool) -> tuple[Path, Path]:
    """The settings file and the MCP file an install changes."""
    if global_:
        home = Path.home()
        return home / ".claude" / "settings.json", home / ".claude.json"
    return project / ".claude" / "settings.json", project / ".mcp.json"


def with_hooks(text: str, name: str, install: bool) -> str:
    """``text`` with plait's group in every event's list (or taken out), the rest unchanged."""
    current = jsonc.loads(text, name).get("hooks", {})
    if not isinstance(current, dict):
        raise ConfigError(f"{name}: 'hooks' must be an object")
    for event in EVENTS:
        groups = current.get(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{name}: 'hooks.{event}' must be a list")
        kept = [group for group in groups if not is_plaits(group)]
        wanted = [*kept, hook_group(event)] if install else kept
        if wanted == groups:
            continue
        if wanted:
            text = jsonc.set_member(text, ("hooks", event), wanted, name=name)
        else:
            text = jsonc.remove_member(text, ("hooks", event), name=name)
    return without_empty(text, ("hooks",), name)


def with_server(text: str, name: str, install: bool) -> str:
    """``text`` with ``mcpServers.plait`` set (or taken out), the rest unchanged."""
    servers = jsonc.loads(text, name).get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{name}: 'mcpServers' must be an object")
    if install:
        if servers.get(MCP_KEY) == MCP_ENTRY:
            return text
        return jsonc.set_member(text, ("mcpServers", MCP_KEY), MCP_ENTRY, name=name)
    if MCP_KEY not in servers:
        return text
    text = jsonc.remove_member(text, ("mcpServers", MCP_KEY), name=name)
    return without_empty(text, ("mcpServers",), name)


def without_empty(text: str, path: tuple[str], name: str) -> str:
    """``text`` without the member at ``path`` when plait's removal left it empty."""
    if text.strip() and jsonc.loads(text, name).get(path[0]) == {}:
        return jsonc.remove_member(text, path, name=name)
    return text


def apply(path: Path, edit: Any, install: bool, what: str, backups: files.Backups) -> None:
    """Edit one file; an uninstall that leaves it holding nothing removes it."""
    text = files.read_text(path)
    updated = edit(text or ("{}\n" if install else ""), str(path), install)
    emptied = not install and text and jsonc.loads(updated, str(path)) == {}
    if emptied and not jsonc.has_comments(updated):
        backups.keep(path)
        path.unlink()
        backups.report.changes.append((path, "removed (plait's entries were all it held)"))
        return
    if updated != (text or ""):
        files.change(path, pretty_if_new(text, updated), what, backups)


def pretty_if_new(before: str, after: str) -> str:
    """A file plait creates is written as indented JSON; an existing one keeps its layout."""
    return after if before.strip() else json.dumps(json.loads(after), indent=2) + "\n"


def check_readable(*paths: Path) -> None:
    """Refuse (``ConfigError`` naming it) before writing anything when a file cannot be read."""
    for path in paths:
        text = files.read_text(path)
        if text.strip():
            jsonc.loads(text, str(path))


def run(
    project_dir: Path | str, *, global_: bool, install: bool, backup_dir: Path | None
) -> files.InstallReport:
    """Install or uninstall; the report of what changed."""
    project = Path(project_dir).resolve()
    settings, servers = paths_for(project, global_)
    check_readable(settings, servers)
    report = files.InstallReport()
    data = files.resolved_data_dir(project)
    backups = files.Backups(backup_dir or data / "backups" / "claude-code", report)
    hooks_what = "hooks: plait-hook on every Claude Code event" if install else "removed hooks"
    apply(settings, with_hooks, install, hooks_what, backups)
    mcp_what = "mcpServers.plait: plait's MCP tools (`plait mcp`)" if install else "removed"
    apply(servers, with_server, install, mcp_what, backups)
    if install:
        files.note_path(report, "Claude Code")
    return report


def install_claude_code(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Add plait's hooks and MCP server to Claude Code (the project's files, or the user's)."""
    return run(project_dir, global_=global_, install=True, backup_dir=backup_dir)


def uninstall_claude_code(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Take out exactly what :func:`install_claude_code` added."""
    return run(project_dir, global_=global_, install=False, backup_dir=backup_dir)


__all__ = ["hook_group", "install_claude_code", "is_plaits", "uninstall_claude_code"]
