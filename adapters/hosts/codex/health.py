"""``plait doctor``'s checks of the Codex integration: hooks, their trust, MCP entry, PATH.

Not being installed for Codex is said plainly and does not fail; an install that is broken
fails: hooks missing for some events, plait's hooks in both the project's and the user's
``hooks.json`` (every hook would run twice), a hook Codex does not trust (it would silently
never run), a project install in a project Codex does not trust, no MCP entry, ``plait-hook``
or ``plait`` not on PATH.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plait.adapters.hosts.codex.hooks import EVENTS
from plait.adapters.hosts.codex.install import (
    MCP_KEY,
    hook_events,
    is_plaits,
    paths_for,
    plaits_trust,
    project_trusted,
    read_toml,
)
from plait.adapters.hosts.config_files import read_text
from plait.adapters.hosts.opencode.health import check, hook_command_check, mcp_entry_check
from plait.doctor import Check
from plait.state.base.errors import PlaitError


def readable(path: Path) -> str:
    """A file's text ("" when missing or unreadable: the checks then say what is missing)."""
    try:
        return read_text(path)
    except PlaitError:
        return ""


def hooked(path: Path) -> set[str]:
    """The events a hooks file runs plait's hook on."""
    try:
        events = hook_events(readable(path), str(path))
    except PlaitError:
        return set()
    return {event for event, groups in events.items() if any(is_plaits(g) for g in groups)}


def untrusted(path: Path, trust_text: str) -> list[str]:
    """Plait's hooks in ``path`` whose trust is missing or stale in the user's config."""
    try:
        state = read_toml(trust_text, "config.toml").get("hooks", {}).get("state", {})
    except (PlaitError, AttributeError):
        state = {}
    return [
        key.split(":")[-3]
        for key, digest in plaits_trust(path, readable(path)).items()
        if not isinstance(state.get(key), dict) or state[key].get("trusted_hash") != digest
    ]


def server_entry(path: Path) -> dict[str, Any] | None:
    """``[mcp_servers.plait]`` of a config file, if there."""
    try:
        servers = read_toml(readable(path), str(path)).get("mcp_servers", {})
    except PlaitError:
        return None
    entry = servers.get(MCP_KEY) if isinstance(servers, dict) else None
    return dict(entry) if isinstance(entry, dict) else None


def hooks_check(project: Path, scopes: dict[str, set[str]]) -> Check:
    """Plait's hooks on every event, in one scope, trusted, and found on PATH."""
    used = [scope for scope, events in scopes.items() if events]
    if len(used) > 1:
        detail = "plait's hooks are in both the project's and your hooks.json: each runs twice"
        return check("codex hooks", "unavailable", detail + "; uninstall one", True)
    scope = used[0]
    paths = paths_for(project, scope == "user")
    missing = sorted(set(EVENTS) - scopes[scope])
    if missing:
        detail = f"no plait hook on {', '.join(missing)}: plait codex install"
        return check("codex hooks", "unavailable", detail, True)
    trust_text = readable(paths.trust)
    stale = untrusted(paths.hooks, trust_text)
    if stale:
        detail = f"Codex does not trust plait's {', '.join(stale)} hooks (they never run): "
        return check("codex hooks", "unavailable", detail + "plait codex install", True)
    if scope == "project" and not project_trusted(project, trust_text):
        detail = "Codex reads this project's .codex/ only once trusted: codex exec --trust here"
        return check("codex hooks", "unavailable", detail, True)
    ok = f"{len(EVENTS)} events, trusted ({scope})"
    return hook_command_check("codex hooks", "Codex", ok)


def codex_checks(project_dir: Path) -> list[Check]:
    """Every check of the Codex integration for a project."""
    project = project_dir.resolve()
    scopes: dict[str, set[str]] = {}
    entries: list[dict[str, Any]] = []
    for scope, global_ in (("project", False), ("user", True)):
        paths = paths_for(project, global_)
        scopes[scope] = hooked(paths.hooks)
        entry = server_entry(paths.servers)
        if entry is not None:
            entries.append(entry)
    if not any(scopes.values()) and not entries:
        detail = "not installed for this project or user: plait codex install"
        return [check("codex", "unavailable", detail, False)]
    if not any(scopes.values()):
        return [check("codex hooks", "unavailable", "no hooks: plait codex install", True)]
    both = "the project's and your config.toml"
    return [hooks_check(project, scopes), mcp_entry_check("codex mcp", entries, "Codex", both)]


__all__ = ["codex_checks"]
