"""Root-session resolution: a child's events land in the root of its ``parentID`` chain."""

from __future__ import annotations

from plait.state.ports import SessionLinks

MAX_PARENT_DEPTH = 32


async def find_root(store: SessionLinks, session_id: str) -> str:
    """Walk parent links up to the root; stop at a cycle or after ``MAX_PARENT_DEPTH`` links."""
    current, seen = session_id, {session_id}
    for _ in range(MAX_PARENT_DEPTH):
        parent = await store.get_parent(current)
        if parent is None or parent in seen:
            return current
        seen.add(parent)
        current = parent
    return current


async def link_child(store: SessionLinks, session_id: str, parent_id: str | None) -> None:
    """Record ``session_id``'s parent, refusing a link that would close a cycle."""
    if not parent_id or parent_id == session_id:
        return
    if await find_root(store, parent_id) == session_id:
        return
    await store.set_parent(session_id, parent_id)


__all__ = ["MAX_PARENT_DEPTH", "find_root", "link_child"]
