"""Files only for their owner: plait's data dir is 0700 and every file plait writes in it 0600.

What plait keeps there holds session events, the corpus, the Redis password and the service token,
so another local user must read none of it. New files are created with the mode (never written
first and tightened after); a data dir left with looser modes by an older plait, a copy or an
archive is tightened when it is opened (:func:`secure_data_dir`). Only plait's own entries are
touched, so a data dir shared with other files keeps theirs as they are.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
# What plait keeps in a data dir (files, or folders whose whole tree is plait's).
DATA_DIR_ENTRIES = (
    "falkordb",
    "corpus.sqlite3",
    "corpus.sqlite3-wal",
    "corpus.sqlite3-shm",
    "recall.sqlite3",
    "recall.sqlite3-wal",
    "recall.sqlite3-shm",
    "token",
    "services",
    "outbox",
    "spool",
)


def private_directory(path: Path) -> Path:
    """``path`` as a directory only its owner can enter (created 0700 if missing).

    Every folder created on the way is 0700 too (``mkdir(parents=True)`` would give the missing
    parents the umask's mode, 0755 as a rule); folders that were there are left as they are.
    """
    missing = [path, *(p for p in path.parents if not p.exists())]
    for folder in reversed([p for p in missing if not p.exists()]):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=DIRECTORY_MODE)
        _tighten(folder, DIRECTORY_MODE)
    _tighten(path, DIRECTORY_MODE)
    return path


def private_file(path: Path, *, create: bool = True) -> Path:
    """``path`` as a file only its owner can read: created empty with mode 0600, or tightened."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    _tighten(path, FILE_MODE)
    return path


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (mode 0600 from the start), replacing it atomically."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    _tighten(temporary, FILE_MODE)  # a temporary left over by a crash may predate this call
    temporary.replace(path)
    return path


def private_sqlite(path: Path) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` in WAL mode, usable from any thread.

    The file and its folder are its owner's alone from the start. SQLite gives the WAL and
    shared-memory files the database file's mode; they are tightened all the same, in case an
    older plait left them looser.
    """
    private_directory(path.parent)
    private_file(path)
    connection = sqlite3.connect(path, check_same_thread=False, timeout=10)
    connection.execute("PRAGMA journal_mode=WAL")
    for suffix in ("-wal", "-shm"):
        private_file(path.with_name(path.name + suffix), create=False)
    return connection


def secure_data_dir(data_dir: Path) -> Path:
    """Tighten a data dir that exists: it 0700, plait's folders 0700 and files 0600 inside it."""
    if not data_dir.is_dir():
        return data_dir
    _tighten(data_dir, DIRECTORY_MODE)
    for name in DATA_DIR_ENTRIES:
        for path in _tree(data_dir / name):
            _tighten(path, DIRECTORY_MODE if path.is_dir() else FILE_MODE)
    return data_dir


def _tree(root: Path) -> Iterator[Path]:
    """``root`` and, for a folder, everything under it; symbolic links are not followed."""
    if root.is_symlink() or not root.exists():
        return
    yield root
    if root.is_dir():
        for folder, directories, files in os.walk(root):
            for name in [*directories, *files]:
                path = Path(folder, name)
                if not path.is_symlink():
                    yield path


def _tighten(path: Path, mode: int) -> None:
    """Take group and other permissions away from a file or folder the process owns."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        return
    if stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(stat.S_IMODE(info.st_mode) & mode)


__all__ = [
    "DATA_DIR_ENTRIES",
    "DIRECTORY_MODE",
    "FILE_MODE",
    "private_directory",
    "private_file",
    "secure_data_dir",
    "write_private",
]
