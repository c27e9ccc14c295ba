"""``plait codex install`` / ``uninstall``: hooks, their trust and MCP entry where Codex reads them.

Codex's home is ``$CODEX_HOME``, else ``~/.codex``. Project install (default) changes, under
the project, files a team commits, so they name no path of this machine:
    ``.codex/hooks.json``   one group per event running ``plait-hook codex <Event> [--keep]``
                            (found through PATH)
    ``.codex/config.toml``  ``[mcp_servers.plait]`` = ``plait mcp``
Global install (``global_=True``) writes the hooks to ``<codex home>/hooks.json`` and the MCP
entry to ``<codex home>/config.toml``.

Codex runs a hook only once it is trusted: ``[hooks.state."<hooks file>:<event>:<group>:<hook>"]
trusted_hash = "sha256:…"`` in the user's ``config.toml``, the hash of the hook's normalized
definition (:func:`trust_hash`). Install declares that trust for plait's own hooks and nobody
else's; that is a user file, where this machine's paths belong. Codex also reads a project's
``.codex/`` only once the project is trusted (``codex --trust`` there, or Codex's first-run
question); install says so when it is not.

The user's other hooks, settings and TOML comments stay as written; a file plait cannot read is
refused before anything is written; a changed file is backed up first
(``<data_dir>/backups/codex/``). Uninstall takes out exactly plait's groups, trust entries and
MCP entry; the trust of a user's hook that moved up a place in its event's list moves with it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.toml_document import TOMLDocument

from plait.adapters.hosts import config_files as files
from plait.adapters.hosts.codex.hooks import EVENTS, KEEP_EVENTS, LABELS, NAME
from plait.adapters.hosts.command_hooks import HOOK_COMMAND
from plait.adapters.hosts.opencode import jsonc
from plait.state.base.errors import ConfigError

HOOK_TIMEOUT_S = 10
# Codex cuts SessionEnd hooks to 3 s (and warns when one asks for more).
TIMEOUTS = {"SessionEnd": 3}
CODEX_DEFAULT_TIMEOUT_S = 600
MCP_KEY = "plait"
MCP_ENTRY: dict[str, Any] = {"command": "plait", "args": ["mcp"]}


@dataclass(frozen=True, slots=True)
class Paths:
    """The files an install changes: the hooks file, the MCP entry's config, the trust config."""

    hooks: Path
    servers: Path
    trust: Path


def codex_home() -> Path:
    """Codex's home folder (``$CODEX_HOME``, else ``~/.codex``)."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def paths_for(project: Path, global_: bool) -> Paths:
    """Where a project's (or the user's) install goes."""
    home = codex_home()
    if global_:
        return Paths(
            hooks=home / "hooks.json", servers=home / "config.toml", trust=home / "config.toml"
        )
    folder = project / ".codex"
    return Paths(
        hooks=folder / "hooks.json", servers=folder / "config.toml", trust=home / "config.toml"
    )


# -- hooks.json -----------------------------------------------------------------------------------
def hook_group(event: str) -> dict[str, Any]:
    """Plait's group for one event (no matcher: every tool, every source)."""
    command = f"{HOOK_COMMAND} {NAME} {event}" + (" --keep" if event in KEEP_EVENTS else "")
    timeout = TIMEOUTS.get(event, HOOK_TIMEOUT_S)
    return {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}


def is_plaits(group: Any) -> bool:
    """Whether a hook group is one plait installed (its command is ``plait-hook codex``)."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(hook, dict)
        and str(hook.get("command", "")).startswith(f"{HOOK_COMMAND} {NAME} ")
        for hook in hooks
    )


def hook_events(text: str, name: str) -> dict[str, list[Any]]:
    """The ``hooks`` object of a hooks file ({} for an empty file); ``ConfigError`` if broken."""
    if not text.strip():
        return {}
    hooks = jsonc.loads(text, name).get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{name}: 'hooks' must be an object")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise ConfigError(f"{name}: 'hooks.{event}' must be a list")
    return hooks


def with_hooks(text: str, name: str, install: bool) -> str:
    """``text`` with plait's group in every event's list (or taken out), the rest unchanged.

    A group plait installed before stays in its place (replaced if it changed); a new one goes
    last, so the user's groups keep their places and their trust.
    """
    current = hook_events(text, name)
    if not text.strip():
        fresh = {event: [hook_group(event)] for event in EVENTS}
        return json.dumps({"hooks": fresh} if install else {}, indent=2) + "\n"
    for event in EVENTS:
        groups = current.get(event, [])
        mine = [index for index, group in enumerate(groups) if is_plaits(group)]
        if install and mine:
            ours = hook_group(event)
            wanted = [
                ours if i == mine[0] else g for i, g in enumerate(groups) if i not in mine[1:]
            ]
        elif install:
            wanted = [*groups, hook_group(event)]
        else:
            wanted = [group for group in groups if not is_plaits(group)]
        if wanted == groups:
            continue
        if wanted:
            text = jsonc.set_member(text, ("hooks", event), wanted, name=name)
        else:
            text = jsonc.remove_member(text, ("hooks", event), name=name)
    if jsonc.loads(text, name).get("hooks") == {}:
        text = jsonc.remove_member(text, ("hooks",), name=name)
    return text


# -- trust ----------------------------------------------------------------------------------------
def trust_hash(event: str, group: dict[str, Any], hook: dict[str, Any]) -> str:
    """Codex's hash of one hook: SHA-256 of its normalized definition as sorted, compact JSON.

    The definition is the event's label, the group's matcher (when it has one) and the one
    hook with its timeout filled in (600 s when unset) and ``async`` (false when unset).
    """
    normalized: dict[str, Any] = {
        "type": "command",
        "command": hook.get("command", ""),
        "timeout": max(1, int(hook.get("timeout") or CODEX_DEFAULT_TIMEOUT_S)),
        "async": bool(hook.get("async", False)),
    }
    if hook.get("statusMessage") is not None:
        normalized["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": LABELS[event], "hooks": [normalized]}
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def trust_key(hooks_file: Path, event: str, group: int, hook: int) -> str:
    """Codex's key for one hook's state: ``<hooks file>:<event label>:<group>:<hook>``."""
    return f"{hooks_file}:{LABELS[event]}:{group}:{hook}"


def plaits_trust(hooks_file: Path, text: str) -> dict[str, str]:
    """The trust entries plait's hooks in a hooks file need (key → hash)."""
    entries: dict[str, str] = {}
    for event, groups in hook_events(text, str(hooks_file)).items():
        if event not in LABELS:
            continue
        for index, group in enumerate(groups):
            if is_plaits(group):
                for position, hook in enumerate(group["hooks"]):
                    key = trust_key(hooks_file, event, index, position)
                    entries[key] = trust_hash(event, group, hook)
    return entries


def moved_keys(hooks_file: Path, before: str) -> dict[str, str]:
    """Trust keys of the user's hooks that move up when plait's groups are taken out."""
    moves: dict[str, str] = {}
    for event, groups in hook_events(before, str(hooks_file)).items():
        if event not in LABELS:
            continue
        kept = 0
        for index, group in enumerate(groups):
            if is_plaits(group):
                continue
            hooks = group.get("hooks") if isinstance(group, dict) else None
            for position in range(len(hooks) if isinstance(hooks, list) else 0):
                if kept != index:
                    old = trust_key(hooks_file, event, index, position)
                    moves[old] = trust_key(hooks_file, event, kept, position)
            kept += 1
    return moves


def read_toml(text: str, name: str) -> TOMLDocument:
    """A TOML document (comments kept); ``ConfigError`` naming the file when it is broken."""
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as error:
        raise ConfigError(f"{name}: not valid TOML: {error}") from None


def subtable(parent: Any, key: str, name: str) -> Any:
    """``parent[key]`` as a table, made (implicit, so no empty header) when missing."""
    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=True)
    table = parent[key]
    if not isinstance(table, dict):
        raise ConfigError(f"{name}: '{key}' must be a table")
    return table


def with_trust(
    text: str, name: str, remove: dict[str, str], add: dict[str, str], moves: dict[str, str]
) -> str:
    """``text`` with plait's trust entries set (``add``), old ones out, moved ones re-keyed.

    Entries already as wanted are left as written, so a second install changes nothing.
    """
    document = read_toml(text, name)
    hooks = document.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    current = state if isinstance(state, dict) else {}
    stale = [key for key in remove if key not in add and key in current]
    wanted = {
        key: digest
        for key, digest in add.items()
        if not isinstance(current.get(key), dict) or current[key].get("trusted_hash") != digest
    }
    moving = {old: new for old, new in moves.items() if old in current}
    if not (stale or wanted or moving):
        return text
    state = subtable(subtable(document, "hooks", name), "state", name)
    for key in stale:
        del state[key]
    for old in sorted(moving, key=lambda key: int(key.rsplit(":", 2)[1])):
        state[moving[old]] = state.pop(old)
    for key, digest in wanted.items():
        entry = tomlkit.table()
        entry["trusted_hash"] = digest
        state[key] = entry
    prune(document, ("hooks", "state"))
    return tidy(tomlkit.dumps(document))


def tidy(text: str) -> str:
    """A TOML text without the blank lines a removal left at its end."""
    return text.rstrip() + "\n" if text.strip() else ""


def prune(document: TOMLDocument, path: tuple[str, ...]) -> None:
    """Take out the tables along ``path`` that plait's removal left empty (deepest first)."""
    for depth in range(len(path), 0, -1):
        parent: Any = document
        for key in path[: depth - 1]:
            parent = parent.get(key)
            if not isinstance(parent, dict):
                return
        if isinstance(parent.get(path[depth - 1]), dict) and not parent[path[depth - 1]]:
            del parent[path[depth - 1]]


def with_server(text: str, name: str, install: bool) -> str:
    """``text`` with ``[mcp_servers.plait]`` set (or taken out), the rest unchanged."""
    document = read_toml(text, name)
    servers = document.get("mcp_servers")
    if install:
        if isinstance(servers, dict) and servers.get(MCP_KEY) == MCP_ENTRY:
            return text
        entry = tomlkit.table()
        entry.update(MCP_ENTRY)
        subtable(document, "mcp_servers", name)[MCP_KEY] = entry
    else:
        if not isinstance(servers, dict) or MCP_KEY not in servers:
            return text
        del servers[MCP_KEY]
        prune(document, ("mcp_servers",))
    return tidy(tomlkit.dumps(document))


# -- the install ----------------------------------------------------------------------------------
def project_trusted(project: Path, trust_text: str) -> bool:
    """Whether the user's config trusts the project (Codex reads its ``.codex/`` only then)."""
    projects = read_toml(trust_text, "config.toml").get("projects", {})
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def write(path: Path, before: str, after: str, what: str, backups: files.Backups) -> None:
    """Write a changed file; one that plait's removal left empty is removed."""
    if after == before:
        return
    if before and not after.strip():
        backups.keep(path)
        path.unlink()
        backups.report.changes.append((path, "removed (plait's entries were all it held)"))
        return
    files.change(path, after, what, backups)


def run(
    project_dir: Path | str, *, global_: bool, install: bool, backup_dir: Path | None
) -> files.InstallReport:
    """Install or uninstall; the report of what changed."""
    project = Path(project_dir).resolve()
    paths = paths_for(project, global_)
    texts = {path: files.read_text(path) for path in {paths.hooks, paths.servers, paths.trust}}
    hooks_before = texts[paths.hooks]
    hooks_after = with_hooks(hooks_before, str(paths.hooks), install)
    if hooks_after.strip() and jsonc.loads(hooks_after, str(paths.hooks)) == {}:
        hooks_after = ""
    for path in {paths.servers, paths.trust}:
        read_toml(texts[path], str(path))  # refuse a broken file before writing anything
    report = files.InstallReport()
    backups = files.Backups(
        backup_dir or files.resolved_data_dir(project) / "backups" / "codex", report
    )
    old_trust = plaits_trust(paths.hooks, hooks_before)
    new_trust = plaits_trust(paths.hooks, hooks_after) if install else {}
    moves = {} if install else moved_keys(paths.hooks, hooks_before)
    if paths.servers == paths.trust:
        after = with_server(texts[paths.servers], str(paths.servers), install)
        after = with_trust(after, str(paths.trust), old_trust, new_trust, moves)
        write(
            paths.trust,
            texts[paths.trust],
            after,
            "mcp_servers.plait and plait's hook trust",
            backups,
        )
    else:
        after = with_server(texts[paths.servers], str(paths.servers), install)
        write(paths.servers, texts[paths.servers], after, "mcp_servers.plait: `plait mcp`", backups)
        trusted = with_trust(texts[paths.trust], str(paths.trust), old_trust, new_trust, moves)
        write(
            paths.trust,
            texts[paths.trust],
            trusted,
            "hooks.state: trust for plait's hooks",
            backups,
        )
    what = "hooks: plait-hook on every Codex event" if install else "removed plait's hooks"
    write(paths.hooks, hooks_before, pretty_if_new(hooks_before, hooks_after), what, backups)
    if install and not global_ and not project_trusted(project, files.read_text(paths.trust)):
        report.notes.append(
            "Codex reads a project's .codex/ only once you trust the project: answer yes when "
            "codex asks, or run `codex exec --trust` here once (or install with --global)"
        )
    if install:
        files.note_path(report, "Codex")
    return report


def pretty_if_new(before: str, after: str) -> str:
    """A hooks file plait creates is written as indented JSON; an existing one keeps its layout."""
    if before.strip() or not after.strip():
        return after
    return json.dumps(json.loads(after), indent=2) + "\n"


def install_codex(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Add plait's hooks (trusted) and MCP server to Codex (the project's files, or the user's)."""
    return run(project_dir, global_=global_, install=True, backup_dir=backup_dir)


def uninstall_codex(
    project_dir: Path | str, *, global_: bool = False, backup_dir: Path | None = None
) -> files.InstallReport:
    """Take out exactly what :func:`install_codex` added."""
    return run(project_dir, global_=global_, install=False, backup_dir=backup_dir)


__all__ = [
    "codex_home",
    "hook_group",
    "install_codex",
    "is_plaits",
    "paths_for",
    "plaits_trust",
    "trust_hash",
    "uninstall_codex",
]
