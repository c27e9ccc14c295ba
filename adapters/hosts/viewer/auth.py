"""The viewer's login and request checks: one-time login links, session cookies, CSRF.

``plait ui`` asks the running service (with its bearer token) for a login link: a random
token kept here, hashed, for :data:`LINK_TTL_S` seconds, good once. Opening the link trades it
for a session: an ``HttpOnly; SameSite=Strict`` cookie naming a random session id, and a CSRF
token of that session that every form carries. A change (any POST) must come from the viewer's
own origin (``Origin`` and ``Sec-Fetch-Site``, when the browser sends them) and carry the CSRF
token; the ``Host`` must be the loopback address the service listens on (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

COOKIE = "plait_viewer"
LINK_TTL_S = 600.0
SESSION_TTL_S = 12 * 3600.0
MAX_SESSIONS = 32
MAX_LINKS = 32
LOOPBACK_NAMES = frozenset({"localhost", "::1"})


def digest(token: str) -> str:
    """A token as it is kept: its sha256 (a leaked dump of this process names no live token)."""
    return hashlib.sha256(token.encode("utf-8", errors="replace")).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewerSession:
    """One logged-in browser: its CSRF token and when it ends."""

    csrf: str
    expires_at: float


@dataclass(kw_only=True)
class ViewerAuth:
    """Login links and sessions of one service process (nothing is written to disk)."""

    clock: Callable[[], float] = time.monotonic
    _links: OrderedDict[str, float] = field(default_factory=OrderedDict)
    _sessions: OrderedDict[str, ViewerSession] = field(default_factory=OrderedDict)

    def issue_link(self) -> str:
        """A new one-time login token (the oldest unused ones go past :data:`MAX_LINKS`)."""
        token = secrets.token_urlsafe(32)
        self._links[digest(token)] = self.clock() + LINK_TTL_S
        while len(self._links) > MAX_LINKS:
            self._links.popitem(last=False)
        return token

    def redeem(self, token: str) -> tuple[str, ViewerSession] | None:
        """Trade a login token for a new session (id, session); None when it is not good.

        A token is good once, before it expires; either way it is gone after this call.
        """
        expires_at = self._links.pop(digest(token), None)
        if expires_at is None or expires_at <= self.clock():
            return None
        session_id = secrets.token_urlsafe(32)
        session = ViewerSession(
            csrf=secrets.token_urlsafe(32), expires_at=self.clock() + SESSION_TTL_S
        )
        self._sessions[digest(session_id)] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session_id, session

    def session(self, session_id: str | None) -> ViewerSession | None:
        """The live session a cookie names, or None."""
        if not session_id:
            return None
        key = digest(session_id)
        found = self._sessions.get(key)
        if found is None:
            return None
        if found.expires_at <= self.clock():
            del self._sessions[key]
            return None
        return found

    def end(self, session_id: str | None) -> None:
        """Log a session out."""
        if session_id:
            self._sessions.pop(digest(session_id), None)


def csrf_matches(given: str | None, session: ViewerSession) -> bool:
    """Whether a form's CSRF token is its session's (constant time)."""
    return given is not None and hmac.compare_digest(given.encode(), session.csrf.encode())


def host_allowed(host_header: str | None, port: int | None) -> bool:
    """Whether a ``Host`` header names the loopback service (and its port, when known)."""
    if not host_header:
        return False
    try:
        parts = urlsplit(f"//{host_header}")
        given_port = parts.port
    except ValueError:
        return False
    name = parts.hostname or ""
    if name not in LOOPBACK_NAMES and not name.startswith("127."):
        return False
    return port is None or given_port in (None, port)


def same_origin(headers: dict[str, str], origin_of_viewer: str) -> bool:
    """Whether a change request came from the viewer's own pages.

    ``Sec-Fetch-Site`` must be ``same-origin`` when sent, and ``Origin`` must be the viewer's
    own (``http://127.0.0.1:8123``) when sent; browsers send at least one of them with every POST.
    """
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return False
    origin = headers.get("origin")
    if origin is not None and origin != origin_of_viewer:
        return False
    return fetch_site is not None or origin is not None


__all__ = [
    "COOKIE",
    "LINK_TTL_S",
    "SESSION_TTL_S",
    "ViewerAuth",
    "ViewerSession",
    "csrf_matches",
    "host_allowed",
    "same_origin",
]
