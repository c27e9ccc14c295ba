"""A host's config files, changed safely: read, backed up, written atomically, reported.

What every host's ``install`` and ``uninstall`` share (OpenCode's, Claude Code's, Codex's,
Gemini CLI's): a file is copied into ``<data_dir>/backups/<host>/`` before it changes, written
whole through a temporary file, and each change is said in an :class:`InstallReport`.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from plait.state.base.errors import ConfigError


@dataclass
class InstallReport:
    """What an install or uninstall did, and what a person should know next."""

    changes: list[tuple[Path, str]] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def written(self) -> list[Path]:
        """The files changed, in order."""
        return [path for path, _ in self.changes]


def plait_on_path() -> str | None:
    """The ``plait`` OpenCode would find through PATH, if any."""
    return shutil.which("plait")


def note_path(report: InstallReport, host: str) -> None:
    """Say so when a command-hook host could not run ``plait`` and ``plait-hook`` (not on PATH)."""
    if plait_on_path() is None:
        report.notes.append(
            f"`plait` and `plait-hook` are not on your PATH, so {host} cannot run them: "
            "install plait as a tool (`uv tool install plait`)"
        )


def read_text(path: Path) -> str:
    """A file's text ("" when missing), or :class:`ConfigError` naming it."""
    try:
        return path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


def write_text(path: Path, text: str) -> Path:
    """Write a file atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return path


class Backups:
    """Copies of files taken before plait changes them."""

    def __init__(self, directory: Path, report: InstallReport) -> None:
        """Keep copies in ``directory``; list them in ``report``."""
        self.directory = directory
        self.report = report
        self.stamp = time.strftime("%Y%m%d-%H%M%S")

    def keep(self, path: Path) -> None:
        """Copy ``path`` (if it exists) before it changes."""
        if not path.exists():
            return
        name = "_".join(part for part in path.resolve().parts[1:])
        copy = self.directory / f"{self.stamp}-{name}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)
        except OSError as error:
            raise ConfigError(
                f"cannot back up {path} into {self.directory} before changing it: {error}; "
                "set PLAIT_DATA_DIR to a writable folder"
            ) from None
        self.report.backups.append(copy)


def change(path: Path, text: str, what: str, backups: Backups) -> None:
    """Write ``text`` to ``path`` if it differs, backing the old file up first."""
    if path.exists() and read_text(path) == text:
        return
    backups.keep(path)
    write_text(path, text)
    backups.report.changes.append((path, what))


def default_data_dir() -> Path:
    """The data dir the plugin assumes when nothing says otherwise."""
    import platformdirs

    return Path(platformdirs.user_data_dir("plait", appauthor=False))


def resolved_data_dir(project_dir: Path) -> Path:
    """The data dir plait's settings give for the project (what ``plait serve`` will use)."""
    from plait.state.base.settings import Settings

    return Settings.load(project_dir).resolved_data_dir()


__all__ = [
    "Backups",
    "InstallReport",
    "change",
    "default_data_dir",
    "note_path",
    "plait_on_path",
    "read_text",
    "resolved_data_dir",
    "write_text",
]
