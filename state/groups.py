"""Knowledge-graph groups: one per project, one per user for cross-project preferences."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
DIGEST_CHARS = 8


def group_id_for(prefix: str, project_root: Path) -> str:
    """``<prefix>-<project name>-<8 hex of the resolved path>``: stable, readable, safe."""
    resolved = Path(project_root).expanduser().resolve()
    name = UNSAFE.sub("-", resolved.name).strip("-")[:40] or "root"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:DIGEST_CHARS]
    return f"{UNSAFE.sub('-', prefix)}-{name}-{digest}"


def user_group_id(prefix: str) -> str:
    """The group of the user's cross-project preferences."""
    return f"{UNSAFE.sub('-', prefix)}-user"


def project_name_of(group_id: str, prefix: str) -> str:
    """The readable project name inside a :func:`group_id_for` id (``""`` if not one)."""
    head = f"{UNSAFE.sub('-', prefix)}-"
    if not group_id.startswith(head):
        return ""
    name, _, digest = group_id[len(head) :].rpartition("-")
    return name if len(digest) == DIGEST_CHARS and name else ""


__all__ = ["group_id_for", "project_name_of", "user_group_id"]
