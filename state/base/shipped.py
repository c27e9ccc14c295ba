"""Files that ship inside plait's packages: model weights beside the module that reads them."""

from __future__ import annotations

from importlib import resources


def shipped_text(package: str, name: str) -> str | None:
    """The text of the file ``name`` inside ``package``, or None when it is missing."""
    source = resources.files(package).joinpath(name)
    return source.read_text(encoding="utf-8") if source.is_file() else None


__all__ = ["shipped_text"]
