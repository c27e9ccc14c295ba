"""``plait opencode install``: put the plugin and the MCP entry where OpenCode finds them.

Project install (default) writes, under the project:
    ``.opencode/plugins/plait.ts``  the plugin (OpenCode loads ``.opencode/plugins/*.ts``)
    ``.opencode/plait.json``        ``{"dataDir", "serve"}`` read by the plugin
    ``opencode.json``               ``mcp.plait`` merged in, every other key kept
Global install (``global_=True``) writes the same three under OpenCode's user config dir
(``$XDG_CONFIG_HOME/opencode``, by default ``~/.config/opencode``).
"""

from __future__ import annotations

import json
import os
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from plait.errors import ConfigError

PLUGIN_NAME = "plait.ts"
SETTINGS_NAME = "plait.json"
CONFIG_NAME = "opencode.json"
CONFIG_SCHEMA = "https://opencode.ai/config.json"
MCP_KEY = "plait"


def plugin_source() -> str:
    """The plugin's TypeScript, shipped as package data of ``plait.adapters.hosts.opencode``."""
    return resources.files("plait.adapters.hosts.opencode").joinpath(PLUGIN_NAME).read_text("utf-8")


def plait_command() -> list[str]:
    """How to run plait from anywhere: the ``plait`` script on PATH, else ``uv run plait``."""
    found = shutil.which("plait")
    return [str(Path(found).resolve())] if found else ["uv", "run", "plait"]


def user_config_dir() -> Path:
    """OpenCode's user config dir."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "opencode"


def mcp_entry(command: list[str], project_dir: Path | None) -> dict[str, Any]:
    """The ``mcp.plait`` entry of opencode.json (a local stdio server)."""
    arguments = [*command, "mcp"]
    if project_dir is not None:
        arguments += ["--project", str(project_dir)]
    return {"type": "local", "command": arguments, "enabled": True}


def merge_config(config: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``mcp.plait`` set to ``entry``; every other key kept as it was."""
    merged = dict(config)
    merged.setdefault("$schema", CONFIG_SCHEMA)
    servers = merged.get("mcp")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise ConfigError(f"opencode.json: 'mcp' must be an object, found {type(servers).__name__}")
    merged["mcp"] = {**servers, MCP_KEY: entry}
    return merged


def read_config(path: Path) -> dict[str, Any]:
    """An opencode.json as a dict ({} when missing); ConfigError when it is not a JSON object."""
    if not path.exists():
        return {}
    try:
        loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    return loaded


def config_path(directory: Path) -> Path:
    """``opencode.json`` in ``directory``, or an existing ``opencode.jsonc`` that is plain JSON."""
    plain = directory / CONFIG_NAME
    commented = directory / "opencode.jsonc"
    if plain.exists() or not commented.exists():
        return plain
    return commented


def write_text(path: Path, text: str) -> Path:
    """Write a file atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return path


def resolved_data_dir(project_dir: Path) -> Path:
    """The data dir plait's settings give for the project (what ``plait serve`` will use)."""
    from plait.settings import Settings

    return Settings.load(project_dir).resolved_data_dir()


def install_opencode(
    project_dir: Path | str,
    *,
    global_: bool = False,
    data_dir: Path | str | None = None,
    command: list[str] | None = None,
) -> list[Path]:
    """Install the plugin, its settings and the MCP entry; return the files written.

    Args:
        project_dir: the project (its ``.opencode/`` and ``opencode.json`` are written unless
            ``global_``).
        global_: write into OpenCode's user config dir instead, for every project.
        data_dir: plait's data dir for the plugin; default: what plait's settings resolve.
        command: how to run plait (default :func:`plait_command`).
    """
    project = Path(project_dir).resolve()
    command = command or plait_command()
    base = user_config_dir() if global_ else project / ".opencode"
    config_dir = user_config_dir() if global_ else project
    data = Path(data_dir) if data_dir is not None else resolved_data_dir(project)
    settings = {"dataDir": str(data), "serve": [*command, "serve"]}
    config_file = config_path(config_dir)
    entry = mcp_entry(command, None if global_ else project)
    config = merge_config(read_config(config_file), entry)
    return [
        write_text(base / "plugins" / PLUGIN_NAME, plugin_source()),
        write_text(base / SETTINGS_NAME, json.dumps(settings, indent=2) + "\n"),
        write_text(config_file, json.dumps(config, indent=2) + "\n"),
    ]


__all__ = ["install_opencode", "mcp_entry", "merge_config", "plait_command", "plugin_source"]
