"""Reading fields of a host's JSON payload: every host adapter's checks, one place.

A field plait needs and cannot use raises :class:`InvalidHookPayload` naming its dotted path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plait.state.base.errors import InvalidHookPayload


def require_str(value: Any, field_name: str) -> str:
    """A non-empty string, or :class:`InvalidHookPayload` naming the field."""
    if not isinstance(value, str) or not value.strip():
        kind = (
            "missing"
            if value is None
            else f"must be a non-empty string, not {type(value).__name__}"
        )
        raise InvalidHookPayload(kind, field=field_name)
    return value[:256]


def obj(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one (for optional parts of a payload)."""
    return value if isinstance(value, Mapping) else {}


def mapping(value: Any, field_name: str) -> Mapping[str, Any]:
    """An object, or :class:`InvalidHookPayload` naming the field."""
    if not isinstance(value, Mapping):
        raise InvalidHookPayload("must be an object", field=field_name)
    return value


def optional_str(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


__all__ = ["mapping", "obj", "optional_str", "require_str"]
