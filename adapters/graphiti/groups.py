"""Knowledge-graph groups: one per project, one per user for cross-project preferences."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def group_id_for(prefix: str, project_root: Path) -> str:
    """``<prefix>-<project name>-<8 hex of the resolved path>``: stable, readable, safe."""
    resolved = Path(project_root).expanduser().resolve()
    name = UNSAFE.sub("-", resolved.name).strip("-")[:40] or "root"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    return f"{UNSAFE.sub('-', prefix)}-{name}-{digest}"


def user_group_id(prefix: str) -> str:
    """The group of the user's cross-project preferences."""
    return f"{UNSAFE.sub('-', prefix)}-user"


__all__ = ["group_id_for", "user_group_id"]
