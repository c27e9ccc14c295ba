"""``plait doctor``'s checks of the OpenCode integration: plugin, MCP entry, service, outbox.

Each is a :class:`plait.doctor.Check`. Not being installed for OpenCode is said plainly but does
not fail (plait serves other hosts too); an integration that is installed but broken fails:
the MCP entry without the plugin (or the other way round), a ``plait`` OpenCode cannot find, a
service that holds its lock but does not answer, hooks stuck in the outbox while it runs.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from plait.adapters.hosts.command_hooks import HOOK_COMMAND
from plait.adapters.hosts.http import project_key, running_service, service_file
from plait.adapters.hosts.http.lifecycle import lock_path, service_state
from plait.adapters.hosts.opencode import jsonc
from plait.adapters.hosts.opencode.install import (
    CONFIG_NAMES,
    MCP_KEY,
    plugin_source,
    target_for,
)
from plait.adapters.hosts.opencode.outbox import outbox_path, sending_of
from plait.doctor import Check
from plait.state.base.errors import PlaitError

OUTBOX_STUCK_SECONDS = 60.0


def check(component: str, status: str, detail: str, required: bool) -> Check:
    """A check (typed shorthand)."""
    return Check(
        component=component,
        status=status,  # type: ignore[arg-type]
        detail=detail,
        required=required,
    )


def hook_command_check(component: str, host: str, ok_detail: str) -> Check:
    """A command-hook host's hooks, last check: the host finds ``plait-hook`` on PATH."""
    if shutil.which(HOOK_COMMAND) is None:
        detail = f"{host} cannot find {HOOK_COMMAND!r} on PATH: uv tool install plait"
        return check(component, "unavailable", detail, True)
    return check(component, "ok", ok_detail, True)


def mcp_entry_check(component: str, entries: list[dict[str, Any]], host: str, both: str) -> Check:
    """A command-hook host's MCP entry: there, once, its command found through PATH.

    ``both``: the two places a second entry would be in.
    """
    if not entries:
        detail = f"no plait MCP entry: plait {component.split()[0]} install"
        return check(component, "unavailable", detail, True)
    program = str(entries[0].get("command", ""))
    if not shutil.which(program):
        detail = f"{host} cannot find {program!r} on PATH: uv tool install plait"
        return check(component, "unavailable", detail, True)
    if len(entries) > 1:
        return check(component, "degraded", f"plait's MCP entry is in both {both}", False)
    return check(component, "ok", f"{program} mcp", True)


def installed_at(project_dir: Path) -> tuple[str, Path | None, dict[str, Any] | None]:
    """Where plait is installed for OpenCode (project, else global): plugin and MCP entry."""
    for scope, global_ in (("project", False), ("global", True)):
        target = target_for(project_dir, global_)
        plugin = target.plugin if target.plugin.exists() else None
        entry = mcp_entry_in(target.config_dir)
        if plugin is not None or entry is not None:
            return scope, plugin, entry
    return "", None, None


def mcp_entry_in(directory: Path) -> dict[str, Any] | None:
    """``mcp.plait`` of the folder's opencode.json(c), if there is one."""
    for name in CONFIG_NAMES:
        path = directory / name
        if not path.exists():
            continue
        try:
            servers = jsonc.loads(path.read_text(encoding="utf-8"), str(path)).get("mcp")
        except (PlaitError, OSError):
            continue
        if isinstance(servers, dict) and isinstance(servers.get(MCP_KEY), dict):
            return dict(servers[MCP_KEY])
    return None


def plugin_check(scope: str, plugin: Path | None) -> Check:
    """The plugin file: there, and the one this plait ships."""
    if plugin is None:
        return check("opencode plugin", "unavailable", "missing: run plait opencode install", True)
    if plugin.read_text(encoding="utf-8") != plugin_source():
        detail = f"{plugin} is not this plait's plugin (older or edited): plait opencode install"
        return check("opencode plugin", "degraded", detail, False)
    return check("opencode plugin", "ok", f"{plugin} ({scope})", True)


def entry_check(entry: dict[str, Any] | None) -> Check:
    """The MCP entry: there, enabled, and its command found."""
    if entry is None:
        return check("opencode mcp", "unavailable", "no mcp.plait: plait opencode install", True)
    command = entry.get("command") or []
    program = str(command[0]) if command else ""
    if not shutil.which(program):
        detail = f"OpenCode cannot find {program!r} on PATH: uv tool install plait (see README)"
        return check("opencode mcp", "unavailable", detail, True)
    if entry.get("enabled") is False:
        return check("opencode mcp", "degraded", "mcp.plait is disabled", False)
    return check("opencode mcp", "ok", " ".join(map(str, command)), True)


def service_check(data_dir: Path, project_dir: Path) -> Check:
    """The project's service: running and answering, not running, or hung."""
    found = running_service(data_dir, project_dir)
    if found is not None:
        return check("service", "ok", f"plait serve pid {found.pid} at {found.url}", True)
    state = service_state(service_file(data_dir, project_dir).parent, project_key(project_dir))
    if state.running:
        detail = (
            f"plait serve pid {state.pid} holds {lock_path(service_file(data_dir, project_dir))}"
            " but does not answer: plait stop (the plugin starts a new one on the next hook)"
        )
        return check("service", "unavailable", detail, True)
    return check("service", "ok", "not running (the plugin starts it on first use)", True)


def outbox_check(data_dir: Path, project_dir: Path, service_up: bool) -> Check:
    """Hooks the plugin could not deliver yet: a backlog is fine while no service runs."""
    base = outbox_path(data_dir, project_dir)
    files = [path for path in (base, sending_of(base)) if path.exists()]
    lines = sum(len(path.read_text(errors="replace").splitlines()) for path in files)
    if not lines:
        return check("outbox", "ok", "empty", True)
    age = time.time() - min(path.stat().st_mtime for path in files)
    detail = f"{lines} hook call(s) waiting in {base}"
    if service_up and age > OUTBOX_STUCK_SECONDS:
        return check("outbox", "unavailable", f"{detail}, {age:.0f} s old, not delivered", True)
    return check("outbox", "degraded", f"{detail} (sent when the service answers)", False)


def opencode_checks(data_dir: Path, project_dir: Path) -> list[Check]:
    """Every check of the OpenCode integration for a project."""
    scope, plugin, entry = installed_at(project_dir)
    if not scope:
        detail = "not installed for this project or user: plait opencode install"
        return [check("opencode", "unavailable", detail, False)]
    service = service_check(data_dir, project_dir)
    up = service.status == "ok" and "pid" in service.detail
    return [
        plugin_check(scope, plugin),
        entry_check(entry),
        service,
        outbox_check(data_dir, project_dir, up),
    ]


__all__ = ["opencode_checks"]
