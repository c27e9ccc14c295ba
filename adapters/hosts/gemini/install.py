"""``plait gemini install`` / ``uninstall``: plait as a Gemini CLI extension, hooks enabled.

Gemini CLI 0.61.0 runs command hooks only from an extension, and extensions are the user's
(``~/.gemini/extensions/<name>/``), so the install is the user's whatever ``--global`` says; the
hook client finds each project from the working directory Gemini CLI runs it in. It writes:

    ``~/.gemini/extensions/plait/gemini-extension.json``  the manifest, with
                                    ``mcpServers.plait`` = ``plait mcp`` (found through PATH)
    ``~/.gemini/extensions/plait/hooks/hooks.json``       one group per event running
                                    ``plait-hook gemini <Event> [--keep]``
    ``~/.gemini/settings.json``     ``hooksConfig.enabled = true`` (the rest, comments
                                    included, as written)

A settings file plait cannot read is refused before anything is written, and a changed one is
backed up first (``<data_dir>/backups/gemini/``). Uninstall removes the extension folder and
takes ``hooksConfig.enabled`` out again only if plait put it there (noted in the extension's
``plait-install.json``).
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from plait.adapters.hosts import config_files as files
from plait.adapters.hosts.command_hooks import HOOK_COMMAND
from plait.adapters.hosts.gemini.hooks import EVENTS, KEEP_EVENTS, NAME
from plait.adapters.hosts.opencode import jsonc
from plait.state.base.errors import ConfigError

EXTENSION = "plait"
HOOK_TIMEOUT_MS = 10_000
MCP_KEY = "plait"
MCP_ENTRY: dict[str, Any] = {"command": "plait", "args": ["mcp"]}
RECORD = "plait-install.json"


def gemini_home() -> Path:
    """Gemini CLI's user folder (``~/.gemini``)."""
    return Path.home() / ".gemini"


def extension_dir() -> Path:
    """Plait's extension folder."""
    return gemini_home() / "extensions" / EXTENSION


def settings_path() -> Path:
    """The user's Gemini CLI settings."""
    return gemini_home() / "settings.json"


def plait_version() -> str:
    """The installed plait's version (the extension's)."""
    try:
        return version("plait")
    except PackageNotFoundError:
        return "0.0.0"


def hook_command(event: str) -> str:
    """The command plait's hook runs for one event."""
    return f"{HOOK_COMMAND} {NAME} {event}" + (" --keep" if event in KEEP_EVENTS else "")


def hooks_file() -> dict[str, Any]:
    """The extension's ``hooks/hooks.json``: one named group per event."""
    return {
        "hooks": {
            event: [
                {
                    "hooks": [
                        {
                            "name": f"plait-{event}",
                            "type": "command",
                            "command": hook_command(event),
                            "timeout": HOOK_TIMEOUT_MS,
                        }
                    ]
                }
            ]
            for event in EVENTS
        }
    }


def manifest() -> dict[str, Any]:
    """The extension's ``gemini-extension.json``."""
    return {
        "name": EXTENSION,
        "version": plait_version(),
        "description": "plait: session memory before every model call, long-term recall",
        "mcpServers": {MCP_KEY: MCP_ENTRY},
    }


def hooks_enabled(text: str) -> bool | None:
    """``hooksConfig.enabled`` of a settings text (``None`` when not set)."""
    config = jsonc.loads(text, str(settings_path())).get("hooksConfig") if text.strip() else None
    enabled = config.get("enabled") if isinstance(config, dict) else None
    return enabled if isinstance(enabled, bool) else None


def write_json(path: Path, value: dict[str, Any], what: str, backups: files.Backups) -> None:
    """Write one of the extension's files (indented JSON) when it differs."""
    files.change(path, json.dumps(value, indent=2) + "\n", what, backups)


def install_gemini(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Add plait's extension (hooks and MCP server) to Gemini CLI and enable hooks."""
    settings = settings_path()
    text = files.read_text(settings)
    enabled = hooks_enabled(text)  # refuses a broken settings file before anything is written
    report = files.InstallReport()
    data = files.resolved_data_dir(Path(project_dir).resolve())
    backups = files.Backups(backup_dir or data / "backups" / "gemini", report)
    folder = extension_dir()
    recorded = json.loads(files.read_text(folder / RECORD) or "{}")
    write_json(folder / "gemini-extension.json", manifest(), "the extension: MCP server", backups)
    write_json(folder / "hooks" / "hooks.json", hooks_file(), "hooks on every event", backups)
    if enabled is not True:
        updated = jsonc.set_member(
            text or "{}\n", ("hooksConfig", "enabled"), True, name=str(settings)
        )
        files.change(settings, updated, "hooksConfig.enabled: Gemini CLI runs hooks", backups)
    added = recorded.get("enabled_hooks", False) or enabled is not True
    write_json(folder / RECORD, {"enabled_hooks": added}, "what plait changed", backups)
    if not global_:
        report.notes.append(
            "Gemini CLI runs hooks only from extensions, which are per user: plait is installed "
            "for your user and serves each project from the folder Gemini CLI runs in"
        )
    files.note_path(report, "Gemini CLI")
    return report


def uninstall_gemini(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Take out exactly what :func:`install_gemini` added."""
    settings = settings_path()
    text = files.read_text(settings)
    hooks_enabled(text)  # a broken settings file is refused before anything is removed
    report = files.InstallReport()
    data = files.resolved_data_dir(Path(project_dir).resolve())
    backups = files.Backups(backup_dir or data / "backups" / "gemini", report)
    folder = extension_dir()
    if not folder.exists():
        return report
    try:
        recorded = json.loads(files.read_text(folder / RECORD) or "{}")
    except ValueError:
        raise ConfigError(f"{folder / RECORD}: not JSON; remove {folder} by hand") from None
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            backups.keep(path)
    shutil.rmtree(folder)
    report.changes.append((folder, "removed plait's extension"))
    if recorded.get("enabled_hooks") and text.strip():
        updated = jsonc.remove_member(text, ("hooksConfig", "enabled"), name=str(settings))
        if jsonc.loads(updated, str(settings)).get("hooksConfig") == {}:
            updated = jsonc.remove_member(updated, ("hooksConfig",), name=str(settings))
        if jsonc.loads(updated, str(settings)) == {} and not jsonc.has_comments(updated):
            backups.keep(settings)
            settings.unlink()
            report.changes.append((settings, "removed (plait's setting was all it held)"))
        else:
            files.change(settings, updated, "hooksConfig.enabled taken out", backups)
    return report


__all__ = ["extension_dir", "hooks_file", "install_gemini", "settings_path", "uninstall_gemini"]
