"""Generate the configuration reference (``docs/configuration.md``) from the settings model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from plait.state.base.settings import ENV_NESTED_DELIMITER, ENV_PREFIX, Settings

INTRO = """# Configuration reference

Generated from `plait.Settings` by `uv run plait config-reference`; a test fails when this
file and the model disagree.

Settings are read, highest first, from: explicit arguments (`Memory.open(..., redis={...})`),
`PLAIT_*` environment variables (nested with `__`), `.plait.toml` in the project (or `[tool.plait]`
in its `pyproject.toml`), then `~/.config/plait/config.toml`. A bad value fails with one message
naming the key, the value and where it came from.

Endpoints are coerced: `localhost` becomes `redis://localhost:6379` and `cache.internal:6380`
becomes `redis://cache.internal:6380`; schemes other than `redis://`, `rediss://` and `unix://`
are rejected.
"""


def describe_default(info: FieldInfo) -> str:
    """The default of a field, as it reads in TOML."""
    default = info.get_default(call_default_factory=True)
    if isinstance(default, BaseModel):
        return "(section)"
    if default is None:
        return "unset"
    return f"`{default!r}`".replace("'", '"')


def rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    """(key, environment variable, default, description) for every leaf setting."""
    found: list[tuple[str, str, str, str]] = []
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        annotation: Any = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.extend(rows(annotation, prefix=f"{key}."))
            continue
        variable = ENV_PREFIX + key.replace(".", ENV_NESTED_DELIMITER).upper()
        found.append((key, variable, describe_default(info), info.description or ""))
    return found


def render_reference() -> str:
    """The whole reference as markdown."""
    lines = [INTRO, "| key | environment variable | default | meaning |", "|---|---|---|---|"]
    for key, variable, default, description in rows(Settings):
        lines.append(f"| `{key}` | `{variable}` | {default} | {description} |")
    return "\n".join(lines) + "\n"


__all__ = ["render_reference"]
