"""Knowledge-graph groups: one per project, one per user for cross-project preferences."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
DIGEST_CHARS = 8


def group_id_for(prefix: str, project_root: Path) -> str:
    """``<prefix>-<project name>-<8 hex of the resolved path>``: stable, readable, safe."""
    resolved = Path(project_root).expanduser().resolve()
    name = UNSAFE.sub("-", resolved.name).strip("-")[:40] or "root"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:DIGEST_CHARS]
    return f"{UNSAFE.sub('-', prefix)}-{name}-{digest}"


def project_key(project_dir: Path | str) -> str:
    """A project's key in file names: sha256 of its real path (utf-8), 16 hex digits.

    The OpenCode plugin computes the same key (service file, outbox); plait's spool uses it.
    """
    real = os.path.realpath(os.fspath(project_dir))
    return hashlib.sha256(real.encode()).hexdigest()[:16]


def user_group_id(prefix: str, user: str) -> str:
    """The group of one user's cross-project preferences: ``<prefix>-user-<name>``.

    Each user identity gets its own (configured as ``graphiti.user_id``, else the OS user), so
    two people sharing a data dir or a graph server never read each other's preferences.
    """
    name = UNSAFE.sub("-", user).strip("-")[:40] or "user"
    return f"{UNSAFE.sub('-', prefix)}-user-{name}"


# Who a request acts for on a service a team shares: the user of the token that opened it (None:
# the service's owner, whose user is ``graphiti.user_id`` or the OS user).
_ACTING_USER: ContextVar[str | None] = ContextVar("plait_acting_user", default=None)


@contextmanager
def acting_as(user: str | None) -> Iterator[None]:
    """Within the block, ``user``'s personal memory is the one read and written."""
    token = _ACTING_USER.set(user)
    try:
        yield
    finally:
        _ACTING_USER.reset(token)


def acting_user(owner: str) -> str:
    """The user a request acts for: a team member's, else ``owner`` (the service's user)."""
    return _ACTING_USER.get() or owner


def acting_member() -> str | None:
    """The team member a request acts for; None for the service's own user."""
    return _ACTING_USER.get()


def project_name_of(group_id: str, prefix: str) -> str:
    """The readable project name inside a :func:`group_id_for` id (``""`` if not one)."""
    head = f"{UNSAFE.sub('-', prefix)}-"
    if not group_id.startswith(head):
        return ""
    name, _, digest = group_id[len(head) :].rpartition("-")
    return name if len(digest) == DIGEST_CHARS and name else ""


__all__ = [
    "acting_as",
    "acting_member",
    "acting_user",
    "group_id_for",
    "project_key",
    "project_name_of",
    "user_group_id",
]
