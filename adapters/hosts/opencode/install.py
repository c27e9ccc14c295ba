"""``plait opencode install`` / ``uninstall``: plugin and MCP entry where OpenCode finds them.

Project install (default) changes, under the project, files a team commits, so they hold no
path of this machine:
    ``.opencode/plugins/plait.ts``   the plugin (OpenCode loads ``.opencode/plugins/*.ts``)
    ``opencode.json`` or ``.jsonc``  ``mcp.plait`` = ``plait mcp``, found through PATH; the
                                     file's comments and formatting are kept
Global install (``global_=True``) writes the same under OpenCode's user config dir
(``$XDG_CONFIG_HOME/opencode``, by default ``~/.config/opencode``), plus ``plait.json`` there
(``{"dataDir", "serve"}``) when plait is not on PATH or its data dir is not the default: user
files, where this machine's paths belong.

A file is backed up (``<data_dir>/backups/opencode/``) before it is changed. Uninstall removes
what install added: the plugin (if it is plait's), ``mcp.plait`` (and ``mcp`` if that leaves it
empty; the file if that leaves nothing but ``$schema``), and plait's ``plait.json``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from plait.adapters.hosts.config_files import (
    Backups,
    InstallReport,
    change,
    default_data_dir,
    plait_on_path,
    read_text,
    resolved_data_dir,
)
from plait.adapters.hosts.opencode import jsonc
from plait.state.base.errors import ConfigError

PLUGIN_NAME = "plait.ts"
PLUGIN_MARKER = "PlaitPlugin"
SETTINGS_NAME = "plait.json"
CONFIG_NAMES = ("opencode.json", "opencode.jsonc")
CONFIG_SCHEMA = "https://opencode.ai/config.json"
MCP_KEY = "plait"
COMMAND = ["plait"]


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where an install goes: the plugin folder's parent and the config file's folder."""

    base: Path
    config_dir: Path
    global_: bool

    @property
    def plugin(self) -> Path:
        """The plugin file."""
        return self.base / "plugins" / PLUGIN_NAME

    @property
    def settings(self) -> Path:
        """The plugin's user-level settings file (only global installs write it)."""
        return self.base / SETTINGS_NAME

    def config(self) -> Path:
        """``opencode.json``, or an existing ``opencode.jsonc`` when there is no ``.json``."""
        plain, commented = (self.config_dir / name for name in CONFIG_NAMES)
        return commented if commented.exists() and not plain.exists() else plain


def plugin_source() -> str:
    """The plugin's TypeScript, shipped as package data of ``plait.adapters.hosts.opencode``."""
    return resources.files("plait.adapters.hosts.opencode").joinpath(PLUGIN_NAME).read_text("utf-8")


def user_config_dir() -> Path:
    """OpenCode's user config dir."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "opencode"


def target_for(project_dir: Path, global_: bool) -> Target:
    """Where an install for ``project_dir`` (or the user) goes."""
    if global_:
        return Target(base=user_config_dir(), config_dir=user_config_dir(), global_=True)
    return Target(base=project_dir / ".opencode", config_dir=project_dir, global_=False)


def mcp_entry(command: list[str]) -> dict[str, Any]:
    """The ``mcp.plait`` entry of opencode.json: a local stdio server, ``<command> mcp``.

    OpenCode starts it in the project's directory, which is the project ``plait mcp`` serves.
    """
    return {"type": "local", "command": [*command, "mcp"], "enabled": True}


def install_plugin(target: Target, backups: Backups) -> None:
    """Write the plugin; a changed copy of plait's plugin is backed up, a foreign file refused."""
    source = plugin_source()
    current = read_text(target.plugin)
    if current and PLUGIN_MARKER not in current:
        raise ConfigError(
            f"{target.plugin} exists and is not plait's plugin; move it away, then install again"
        )
    if current and current != source:
        backups.report.notes.append(
            f"{target.plugin} had changes (an older plait, or edits): replaced; the old copy "
            "is in the backups listed"
        )
    change(target.plugin, source, "the plugin: forwards OpenCode's hooks to plait serve", backups)


def install_entry(target: Target, command: list[str], backups: Backups) -> None:
    """Set ``mcp.plait`` in the config file, keeping everything else as written."""
    path = target.config()
    text = read_text(path)
    current = jsonc.loads(text, str(path)).get("mcp")
    entry = mcp_entry(command)
    if isinstance(current, dict) and current.get(MCP_KEY) not in (None, entry):
        backups.report.notes.append(f"replaced the mcp.plait entry in {path}")
    if not text.strip():
        text = json.dumps({"$schema": CONFIG_SCHEMA}, indent=2) + "\n"
    updated = jsonc.set_member(text, ("mcp", MCP_KEY), entry, name=str(path))
    change(path, updated, "mcp.plait: plait's MCP tools (`plait mcp`)", backups)


def install_settings(target: Target, settings: dict[str, Any], backups: Backups) -> None:
    """Global installs: the plugin's user-level settings, when it needs any."""
    if not settings:
        return
    text = json.dumps(settings, indent=2) + "\n"
    change(target.settings, text, "plugin settings (user-level)", backups)


def remove_old_settings(target: Target, backups: Backups) -> None:
    """A project's ``.opencode/plait.json`` from older installs held this machine's paths."""
    if target.global_ or not target.settings.exists():
        return
    try:
        old = json.loads(read_text(target.settings))
    except ValueError:
        return
    if isinstance(old, dict) and set(old) <= {"dataDir", "serve"}:
        backups.keep(target.settings)
        target.settings.unlink()
        backups.report.changes.append((target.settings, "removed (held this machine's paths)"))


def path_notes(target: Target, found: str | None, data: Path, report: InstallReport) -> None:
    """What a person must do for the plugin and OpenCode to find plait and its data."""
    if found is None and not target.global_:
        report.notes.append(
            "`plait` is not on your PATH, so OpenCode cannot start it: install it as a tool "
            "(`uv tool install plait`, or from a checkout `uv tool install --editable .`), or "
            "install with --global, which may name this machine's paths"
        )
    if data != default_data_dir() and not target.global_ and not os.environ.get("PLAIT_DATA_DIR"):
        report.notes.append(
            f"your settings keep plait's data in {data}; tell the plugin too: start OpenCode "
            f'with PLAIT_DATA_DIR={data}, or put {{"dataDir": "{data}"}} in '
            f"{user_config_dir() / SETTINGS_NAME}"
        )


def install_opencode(
    project_dir: Path | str,
    *,
    global_: bool = False,
    data_dir: Path | str | None = None,
    command: list[str] | None = None,
    backup_dir: Path | None = None,
) -> InstallReport:
    """Install the plugin and the MCP entry; report what changed and what to do next.

    Args:
        project_dir: the project (its ``.opencode/`` and ``opencode.json(c)`` are changed
            unless ``global_``).
        global_: install into OpenCode's user config dir instead, for every project.
        data_dir: plait's data dir (default: what plait's settings resolve); a global install
            writes it for the plugin when it is not the default.
        command: how OpenCode runs plait (default ``plait``, found through PATH; a global
            install uses this machine's path when plait is not on PATH).
        backup_dir: where changed files are copied first (default
            ``<data_dir>/backups/opencode``).
    """
    project = Path(project_dir).resolve()
    target = target_for(project, global_)
    data = Path(data_dir) if data_dir is not None else resolved_data_dir(project)
    found = plait_on_path()
    report = InstallReport()
    backups = Backups(backup_dir or data / "backups" / "opencode", report)
    chosen = command or (COMMAND if found or not global_ else [absolute_plait()])
    settings: dict[str, Any] = {}
    if global_ and data != default_data_dir():
        settings["dataDir"] = str(data)
    if global_ and chosen != COMMAND:
        settings["serve"] = [*chosen, "serve"]
    install_plugin(target, backups)
    install_entry(target, chosen, backups)
    install_settings(target, settings, backups)
    remove_old_settings(target, backups)
    path_notes(target, found, data, report)
    return report


def absolute_plait() -> str:
    """This machine's path of the running plait (for user-level files only)."""
    import sys

    script = Path(sys.executable).parent / "plait"
    return str(script if script.exists() else Path(sys.argv[0]).resolve())


def uninstall_opencode(
    project_dir: Path | str,
    *,
    global_: bool = False,
    backup_dir: Path | None = None,
) -> InstallReport:
    """Remove what :func:`install_opencode` added; report what changed."""
    project = Path(project_dir).resolve()
    target = target_for(project, global_)
    report = InstallReport()
    data = resolved_data_dir(project)
    backups = Backups(backup_dir or data / "backups" / "opencode", report)
    current = read_text(target.plugin)
    if current and PLUGIN_MARKER in current:
        backups.keep(target.plugin)
        target.plugin.unlink()
        report.changes.append((target.plugin, "removed the plugin"))
    elif current:
        report.notes.append(f"left {target.plugin}: it is not plait's plugin")
    remove_entry(target, backups)
    if target.settings.exists():
        backups.keep(target.settings)
        target.settings.unlink()
        report.changes.append((target.settings, "removed plait's plugin settings"))
    return report


def remove_entry(target: Target, backups: Backups) -> None:
    """Take ``mcp.plait`` out of the config file (then an empty ``mcp``, then an empty file)."""
    for name in CONFIG_NAMES:
        path = target.config_dir / name
        text = read_text(path)
        if not text or MCP_KEY not in jsonc.loads(text, str(path)).get("mcp", {}):
            continue
        updated = jsonc.remove_member(text, ("mcp", MCP_KEY), name=str(path))
        if jsonc.loads(updated, str(path)).get("mcp") == {}:
            updated = jsonc.remove_member(updated, ("mcp",), name=str(path))
        leftover = jsonc.loads(updated, str(path))
        if leftover in ({}, {"$schema": CONFIG_SCHEMA}) and not jsonc.has_comments(updated):
            backups.keep(path)
            path.unlink()
            backups.report.changes.append((path, "removed (plait's entry was all it held)"))
            continue
        change(path, updated, "removed mcp.plait", backups)


__all__ = [
    "InstallReport",
    "install_opencode",
    "mcp_entry",
    "plugin_source",
    "uninstall_opencode",
]
