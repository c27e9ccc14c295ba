"""plait's error tree: every outside failure is translated into one of these."""

from __future__ import annotations


class PlaitError(Exception):
    """Base of every error plait raises on purpose."""


class UsageError(PlaitError, ValueError):
    """Misuse: a caller gave plait something it cannot use; the message names the field or id.

    Raised to the caller (who can fix it), never failed open.
    """


class ConfigError(UsageError):
    """A setting is invalid: the message names the key, the value and where it came from."""


class BackendUnavailable(PlaitError, ConnectionError):
    """A server plait needs cannot be reached or started."""


class BackendError(PlaitError, RuntimeError):
    """Something plait calls failed in a way that is not misuse (the message says how)."""


class InvalidHookPayload(UsageError):
    """A host sent a hook payload plait cannot use; the message names the field."""

    def __init__(self, message: str, *, field: str = "") -> None:
        """Build the error for ``field`` (a dotted path into the payload)."""
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class UnknownHook(InvalidHookPayload):
    """The hook name is not one plait handles."""


class NotYourSession(UsageError):
    """A team member's call names a session another member started (answered 403)."""

    code = "not_your_session"  # the ``error`` of that answer; its clients read it

    def __init__(self, session_id: str) -> None:
        """Refuse the call to ``session_id``."""
        super().__init__(
            f"session {session_id!r} belongs to another member of this project; "
            "name a session of your own"
        )
        self.session_id = session_id


class UnsafeURL(UsageError):
    """A URL plait refuses to fetch; the message names it, without credentials, and why."""

    def __init__(self, url: str, reason: str) -> None:
        """Refuse ``url`` for ``reason`` (``"127.0.0.1 is a loopback address"``)."""
        from plait.state.base.redact import (
            redact_url,  # errors stay importable before anything else
        )

        self.url = redact_url(url)
        self.reason = reason
        super().__init__(f"refusing to fetch {self.url!r}: {reason}")


class MissingExtra(PlaitError, ImportError):
    """An optional backend is not installed; the message names the extra to install."""

    def __init__(self, what: str, extra: str) -> None:
        """Name what needs the extra and the extra itself."""
        super().__init__(f"{what} needs the {extra!r} extra: uv add 'plait[{extra}]'")


__all__ = [
    "BackendError",
    "BackendUnavailable",
    "ConfigError",
    "InvalidHookPayload",
    "MissingExtra",
    "NotYourSession",
    "PlaitError",
    "UnknownHook",
    "UnsafeURL",
    "UsageError",
]
