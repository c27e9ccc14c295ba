"""Folders plait makes are its owner's alone, every level of them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from plait.adapters.backends.private_files import private_directory


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_folder_made_on_the_way_is_0700_and_others_are_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    old = os.umask(0o022)
    try:
        made = private_directory(shared / "data" / "spool" / "12345")
    finally:
        os.umask(old)
    assert [mode(p) for p in (made, made.parent, made.parent.parent)] == [0o700] * 3
    assert mode(shared) == 0o755
