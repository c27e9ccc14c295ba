"""Edit JSON with comments (OpenCode's ``opencode.json`` / ``opencode.jsonc``) in place.

A person's config file is changed only where plait's entry goes: the edit is a splice of the
text at the spans json-five's parser reports, so every comment, blank line, trailing comma and
indentation elsewhere stays as it was. Reading accepts what OpenCode accepts (comments, trailing
commas; json-five reads JSON5, a superset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from plait.state.base.errors import ConfigError

INDENT = "  "


@dataclass(frozen=True, slots=True)
class Member:
    """One ``"key": value`` of an object: where its key starts and its value ends."""

    key: str
    start: int
    end: int
    node: Any


def _load_model(text: str, name: str) -> Any:
    import json5
    from json5.loader import ModelLoader
    from json5.utils import JSON5DecodeError

    try:
        return json5.loads(text, loader=ModelLoader())
    except (JSON5DecodeError, ValueError, RecursionError) as error:
        raise ConfigError(f"{name}: not valid JSON with comments ({error})") from None


def loads(text: str, name: str = "config") -> dict[str, Any]:
    """The object a JSON-with-comments text holds ({} for an empty text)."""
    import json5
    from json5.utils import JSON5DecodeError

    if not text.strip():
        return {}
    try:
        value = json5.loads(text)
    except (JSON5DecodeError, ValueError, RecursionError) as error:
        raise ConfigError(f"{name}: not valid JSON with comments ({error})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{name}: must hold a JSON object, not {type(value).__name__}")
    return value


def has_comments(text: str) -> bool:
    """Whether the text holds a comment (outside strings)."""
    from json5.tokenizer import tokenize

    return any(token.type in ("LINE_COMMENT", "BLOCK_COMMENT") for token in tokenize(text))


def _key_text(key: Any) -> str:
    return str(getattr(key, "characters", None) or getattr(key, "name", ""))


def _end(node: Any) -> int:
    token = getattr(node, "_end_tok", None) or node._tok
    return int(token.end)


def members(node: Any) -> list[Member]:
    """The members of an object node, in order."""
    return [
        Member(key=_key_text(key), start=int(key._tok.index), end=_end(value), node=value)
        for key, value in zip(node.keys, node.values, strict=True)
    ]


def _is_object(node: Any) -> bool:
    from json5.model import JSONObject

    return isinstance(node, JSONObject)


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def _indent_before(text: str, position: int) -> str | None:
    """The whitespace that starts the line of ``position``, if only whitespace precedes it."""
    start = _line_start(text, position)
    prefix = text[start:position]
    return prefix if not prefix.strip() else None


def _render(value: Any, indent: str) -> str:
    """``value`` as JSON whose lines after the first are indented by ``indent``."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _next_significant(text: str, position: int) -> tuple[str, int] | None:
    """The next token after ``position`` that is not whitespace or a comment, and its start."""
    from json5.tokenizer import tokenize

    for token in tokenize(text[position:]):
        if token.type not in ("WHITESPACE", "LINE_COMMENT", "BLOCK_COMMENT"):
            return str(token.value), position + int(token.index)
    return None


def _insert_member(text: str, node: Any, key: str, value: Any) -> str:
    """``text`` with ``"key": value`` as the first member of the object ``node``.

    First, with its own comma after it, so taking it out again (:func:`remove_member`) leaves
    the text exactly as it was: no other member's comma is ever touched.
    """
    existing = members(node)
    opening, closing = int(node._tok.index), int(node._end_tok.index)
    newline = text.find("\n", opening)
    if existing and 0 <= newline < existing[0].start:  # members on their own lines
        indent = _indent_before(text, existing[0].start) or INDENT
        member = f"{json.dumps(key)}: {_render(value, indent)}"
        return f"{text[: newline + 1]}{indent}{member},\n{text[newline + 1 :]}"
    if existing:  # a one-line object stays on one line
        member = f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        return f"{text[: opening + 1]}{member}, {text[opening + 1 :].lstrip(' ')}"
    outer = _indent_before(text, opening) or ""
    member = f"{json.dumps(key)}: {_render(value, outer + INDENT)}"
    if _indent_before(text, closing) is not None:  # `{` and `}` on lines of their own
        at = _line_start(text, closing)
        return f"{text[:at]}{outer}{INDENT}{member}\n{text[at:]}"
    return f"{text[: opening + 1]}\n{outer}{INDENT}{member}\n{outer}{text[closing:]}"


def _replace_value(text: str, member: Member, value: Any) -> str:
    indent = _indent_before(text, member.start) or ""
    start = int(member.node._tok.index)
    return f"{text[:start]}{_render(value, indent)}{text[member.end :]}"


def set_member(text: str, path: tuple[str, str], value: Any, *, name: str = "config") -> str:
    """``text`` with ``path[0].path[1]`` set to ``value``; the rest of the text unchanged.

    Raises :class:`ConfigError` naming the file for text that is not an object, or a
    ``path[0]`` that is not an object.
    """
    if not text.strip():
        return json.dumps({path[0]: {path[1]: value}}, indent=2) + "\n"
    root = _root(text, name)
    outer = next((m for m in members(root) if m.key == path[0]), None)
    if outer is None:
        return _insert_member(text, root, path[0], {path[1]: value})
    if not _is_object(outer.node):
        raise ConfigError(f"{name}: {path[0]!r} must be an object")
    inner = next((m for m in members(outer.node) if m.key == path[1]), None)
    if inner is None:
        return _insert_member(text, outer.node, path[1], value)
    return _replace_value(text, inner, value)


def remove_member(text: str, path: tuple[str, ...], *, name: str = "config") -> str:
    """``text`` without the member at ``path`` (and its comma); unchanged when there is none."""
    node = _root(text, name)
    found: Member | None = None
    for key in path:
        if not _is_object(node):
            return text
        found = next((m for m in members(node) if m.key == key), None)
        if found is None:
            return text
        parent, node = node, found.node
    assert found is not None
    return _cut_member(text, parent, found)


def _cut_member(text: str, parent: Any, member: Member) -> str:
    """Remove a member, its comma (the one after it, else the one before it) and its lines."""
    siblings = members(parent)
    start, end = member.start, member.end
    comma_before: int | None = None
    following = _next_significant(text, end)
    if following is not None and following[0] == ",":
        end = following[1] + 1
        while end < len(text) and text[end] in " \t":
            end += 1
    elif len(siblings) > 1:
        previous = siblings[[m.start for m in siblings].index(member.start) - 1]
        found = _next_significant(text, previous.end)
        if found is not None and found[0] == ",":
            comma_before = found[1]
    if comma_before is not None and "\n" not in text[comma_before:start]:
        start, comma_before = comma_before, None  # `a, b` on one line: cut `, b`
    line, newline = _line_start(text, start), text.find("\n", end)
    rest = (text[end:newline] if newline >= 0 else text[end:]).strip()
    if not text[line:start].strip() and (not rest or rest.startswith("//")):
        start, end = line, (newline + 1 if newline >= 0 else len(text))
    text = text[:start] + text[end:]
    if comma_before is not None:
        text = text[:comma_before] + text[comma_before + 1 :]
    if len(siblings) == 1:  # the object is empty now: `{}` again
        opening = int(parent._tok.index)
        closing = text.find("}", opening)
        if closing > 0 and not text[opening + 1 : closing].strip():
            text = text[: opening + 1] + text[closing:]
    return text


def _root(text: str, name: str) -> Any:
    model = _load_model(text, name)
    root = model.value
    if not _is_object(root):
        raise ConfigError(f"{name}: must hold a JSON object")
    return root


__all__ = ["has_comments", "loads", "remove_member", "set_member"]
