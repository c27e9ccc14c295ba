"""Recall at the point of action: what the session knows about the file a tool is about to touch.

Pure: a snapshot and a tool call in, a ``<file_memory>`` block of at most :data:`FILE_MEMORY_MAX`
characters out, or ``""`` when the session holds nothing about the file (then nothing is said).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from html import escape
from typing import Any

from plait.nodes.tool_outcome import patch_files
from plait.state.snapshot import Item, Snapshot

FILE_MEMORY_MAX = 1024
ACTING_TOOLS = frozenset({"edit", "write", "patch", "bash"})
PATH_KEYS = ("file_path", "filePath", "path", "notebook_path")
# a word of a shell command that names a file: a path with an extension
FILE_WORD = re.compile(r"[\w./-]+\.\w{1,8}")
NAME_MIN = 3


def touched_files(tool: str, args: Mapping[str, Any]) -> list[str]:
    """The files an edit, write, patch or shell command names."""
    if tool not in ACTING_TOOLS:
        return []
    named = [args[key] for key in PATH_KEYS if isinstance(args.get(key), str) and args[key]]
    if tool == "patch":
        named += [touch.path for touch in patch_files(args)]
    command = args.get("command")
    if tool == "bash" and isinstance(command, str):
        named += FILE_WORD.findall(command)
    return list(dict.fromkeys(named))


def about(item: Item, path: str) -> bool:
    """Whether an item names the file (its path, or its file name)."""
    name = os.path.basename(path)
    return path in item.text or (len(name) >= NAME_MIN and name in item.text)


def file_memory(snapshot: Snapshot, tool: str, args: Mapping[str, Any]) -> str:
    """The ``<file_memory>`` block for a tool call, within :data:`FILE_MEMORY_MAX`; "" for none."""
    for path in touched_files(tool, args):
        kinds = (
            ("rule", snapshot.rules),
            ("decision", snapshot.decisions),
            ("error", snapshot.errors),
        )
        lines = [
            f"  <{kind}>{escape(item.text, quote=False)}</{kind}>"
            for kind, items in kinds
            for item in items
            if about(item, path)
        ]
        if lines:
            return fitted(path, lines)
    return ""


def fitted(path: str, lines: list[str]) -> str:
    """The block with as many lines as fit in :data:`FILE_MEMORY_MAX` characters."""
    head = f'<file_memory path="{escape(path[:200])}">'
    tail = "</file_memory>"
    kept: list[str] = []
    for line in lines:
        if len(head) + len(tail) + sum(len(k) + 1 for k in kept) + len(line) + 2 > FILE_MEMORY_MAX:
            break
        kept.append(line)
    return "\n".join([head, *kept, tail]) if kept else ""


__all__ = ["FILE_MEMORY_MAX", "file_memory", "touched_files"]
