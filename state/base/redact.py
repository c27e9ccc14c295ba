"""Privacy: strip ``<private>`` spans and redact secrets before anything is stored or sent.

Pure, total and idempotent: ``redact(redact(text)) == redact(text)`` for every ``str`` (lone
surrogates and NUL included), in time linear in the text. The rules err on the side of redacting:
a masked harmless value costs little, a stored key costs a rotation.

What is redacted (the name, flag or scheme in front of a secret is kept, the secret goes):

- private key blocks (PEM, OpenSSH, PGP, PuTTY), also cut off or base64-encoded;
- provider token shapes (see :mod:`plait.state.base._secret_shapes`) wherever they appear;
- values of names that say they hold a secret, in env, shell, JSON, YAML, TOML, INI, XML,
  connection-string and URL-query forms (``DB_PASS=…``, ``"api_key": "…"``, ``;AccountKey=…;``,
  ``?sig=…&code=…``), ``Authorization``/``Cookie`` headers and ``Bearer …``;
- command-line credentials: ``--password …``, ``curl -u user:pass``, ``mysql -p…``,
  ``sshpass -p …``, ``docker login -p …``, ``redis-cli -a …``, ``.netrc`` lines, SQL
  ``IDENTIFIED BY '…'``;
- URL userinfo passwords (and usernames of 20 characters or more, which are keys);
- unlabelled high-entropy tokens, by the rule of :mod:`plait.state.base._randomness`, which keeps
  hashes, commit ids, UUIDs, integrity strings, base64 images, paths, versions and identifiers.

How it stays fast on the hook path: the text is mapped once to bytes, one byte a code point
(anything outside ASCII becomes DEL, so offsets stay those of the ``str``); every scan is a C-level
literal search (``bytes.find``, literal-led patterns, ``bytes.translate`` into character classes);
Python-level work happens only where a keyword, a separator or a long token was found.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import logging
import re
import sys
import traceback
from collections.abc import Collection, Iterator, Mapping
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from plait.state.base._randomness import MAX_LENGTH, looks_random, looks_random_path
from plait.state.base._secret_shapes import (
    AUTH_SCHEMES,
    BASE64_PEM_PREFIX,
    KEY_NOT_SECRET,
    KEY_QUALIFIERS,
    NAME_MODIFIERS,
    NAME_QUANTIFIERS,
    NOT_SECRET_NAMES,
    NOT_SECRET_VALUES,
    PASSWORD_FLAGS,
    PROVIDER_SHAPES,
    QUERY_SECRET_NAMES,
    SECRET_SUFFIXES,
    SECRET_WORDS,
)

REDACTED = "[REDACTED]"

Span = tuple[int, int]

# -- one byte a code point ------------------------------------------------------------------------
_OPAQUE_ERRORS = "plait.state.base.redact.opaque"


def _opaque(error: UnicodeError) -> tuple[str, int]:
    """Encode each non-ASCII code point (lone surrogates too) as one DEL byte."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "\x7f" * (error.end - error.start), error.end


codecs.register_error(_OPAQUE_ERRORS, _opaque)


def _as_bytes(text: str) -> bytes:
    """``text`` as bytes with the same offsets: ASCII kept, anything else one DEL byte."""
    return text.encode("ascii", _OPAQUE_ERRORS)


def _class_table(members: bytes, member: bytes = b"t", other: bytes = b" ") -> bytes:
    """A ``bytes.translate`` table sending ``members`` to ``member`` and the rest to ``other``."""
    return bytes(member[0] if i in members else other[0] for i in range(256))


_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_TABLE = _class_table(_ALNUM + b"+/=_.~%:-")
_NAME_TABLE = _class_table(_ALNUM + b"_.-")
_LONG_TOKEN = re.compile(b"t" * 20 + b"t*")

# -- private spans --------------------------------------------------------------------------------
# A tag ends at ``>``, or where the text ends or the next tag starts (a tag cut off).
_PRIVATE_TAG = re.compile(rb"<(/?)[ \t]*private(?![a-z0-9_:-])[^<>]{0,256}(?:>|\Z|(?=<))")
_MAX_STRIP_ROUNDS = 8


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` spans, nested ones whole; an unclosed one runs to the end."""
    for _ in range(_MAX_STRIP_ROUNDS):
        spans = _private_spans(text)
        if not spans:
            return text
        text = _cut(text, spans, "")
    first = _PRIVATE_TAG.search(_as_bytes(text).lower())  # nesting built to defeat the rounds
    return _cut(text, [(first.start(), len(text))], "") if first else text


def _private_spans(text: str) -> list[Span]:
    """Where the private spans and stray closing tags are (case-insensitive, nesting counted)."""
    if "<" not in text:
        return []
    lower = _as_bytes(text).lower()
    if b"private" not in lower:
        return []
    spans: list[Span] = []
    depth, opened = 0, 0
    for tag in _PRIVATE_TAG.finditer(lower):
        closing, self_closing = bool(tag.group(1)), tag.group().endswith(b"/>")
        if closing and depth:
            depth -= 1
            if not depth:
                spans.append((opened, tag.end()))
        elif closing or (self_closing and not depth):
            spans.append(tag.span())
        elif not self_closing:
            opened = tag.start() if not depth else opened
            depth += 1
    if depth:
        spans.append((opened, len(text)))
    return spans


# -- secrets --------------------------------------------------------------------------------------
_MAX_REDACT_ROUNDS = 4


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string in it :func:`redact` ed (keys are kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


def redact_secrets(text: str) -> str:
    """Replace secrets with :data:`REDACTED`, keeping the names and schemes in front of them."""
    for _ in range(_MAX_REDACT_ROUNDS):
        spans = secret_spans(text)
        if not spans:
            break
        text = _cut(text, spans, REDACTED)
    return text


def redact(text: str) -> str:
    """Strip private spans, then redact secrets. Safe on any ``str`` (lone surrogates too)."""
    if not text:
        return text
    return redact_secrets(strip_private(text))


def secret_spans(text: str) -> list[Span]:
    """The ``(start, end)`` offsets of every secret in ``text`` (unsorted, may overlap)."""
    data = _scan_view(_as_bytes(text))
    lower = data.lower()
    first = {keyword: lower.find(keyword) for keyword in _KEYWORDS}
    spans = list(_private_key_spans(data)) if first[b"key"] >= 0 else []  # PEM, PuTTY: "Key"
    spans += _token_spans(data)
    spans += _assignment_spans(data, lower, first)
    if b"://" in data:
        spans += _url_credential_spans(data)
    if b" -" in data:
        named = any(position >= 0 for position in first.values())
        spans += _command_line_spans(data, named=named)
    spans += _phrase_spans(lower, has_pass=first[b"pass"] >= 0)
    if first[b"pwd"] >= 0 and b";" in lower:
        spans += _connection_string_spans(lower)
    return [span for span in spans if not _is_marker(text, span)]


# Same-length rewrites, so text quoted for a shell or escaped for JSON scans like plain text:
# ``'"'"'`` and ``'\''`` (a quote inside single quotes) read as a quote, ``\n`` as a line end.
_VIEW_REWRITES = (
    (b"'\"'\"'", b"    '"),
    (b"'\\''", b"   '"),
    (b"\\n", b" \n"),
    (b"\\r", b" \r"),
    (b"\\t", b"  "),
)


def _scan_view(data: bytes) -> bytes:
    """``data`` with :data:`_VIEW_REWRITES` applied (offsets unchanged)."""
    for old, new in _VIEW_REWRITES:
        if old in data:
            data = data.replace(old, new)
    return data


def _is_marker(text: str, span: Span) -> bool:
    """Whether the span is already nothing but the marker."""
    return text[span[0] : span[1]] == REDACTED


def _cut(text: str, spans: list[Span], marker: str) -> str:
    """Replace the merged spans of ``text`` with ``marker``."""
    pieces: list[str] = []
    position = 0
    for start, end in _merged(spans):
        pieces += [text[position:start], marker]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _merged(spans: list[Span]) -> list[Span]:
    """Sorted spans with overlapping and touching ones joined."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# -- private key blocks ---------------------------------------------------------------------------
_PEM_HEADER = re.compile(rb"-----BEGIN [A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----")
_PEM_FOOTER = re.compile(rb"-----END [A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----")
_PUTTY_PRIVATE = re.compile(rb"Private-Lines:.*?(?:Private-MAC:[^\r\n]*|\Z)", re.DOTALL)


def _private_key_spans(data: bytes) -> Iterator[Span]:
    """PEM/OpenSSH/PGP private key blocks (to the end when cut off) and PuTTY private lines."""
    position = data.find(b"-----BEGIN ")
    while position >= 0:
        header = _PEM_HEADER.match(data, position)
        if header:
            footer = _PEM_FOOTER.search(data, header.end())
            end = footer.end() if footer else len(data)
            yield position, end
            position = end
        position = data.find(b"-----BEGIN ", position + 1)
    if b"Private-Lines:" in data:
        yield from (match.span() for match in _PUTTY_PRIVATE.finditer(data))


# -- long tokens: provider shapes and entropy -----------------------------------------------------
_PUNCTUATION = "=.:-_~/+%"
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_~-]{20,}")
_PATH_FREE_CANDIDATE = re.compile(r"[A-Za-z0-9+_~-]{20,}")
_DIGIT = re.compile(rb"[0-9]")
_UPPER = re.compile(rb"[A-Z]")
_LOWER = re.compile(rb"[a-z]")
_HASH_LABEL = re.compile(r"(?:h1|sha1|sha224|sha256|sha384|sha512|md5)[:=]$", re.IGNORECASE)
_KEPT_CONTEXT = re.compile(
    rb"(?:base64,|(?:\bid|_id|-id|uuid|guid|digest|checksum|etag|integrity|nonce|commit|revision)"
    rb"\\?[\"']?[ \t]{0,3}[:=]?[ \t]{0,3}\\?[\"']?)$",
    re.IGNORECASE,
)
_MIN_BASE64_PART = 8
_IMAGE_PREFIXES = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "AAABAAEA", "JVBERi0")


def _token_spans(data: bytes) -> Iterator[Span]:
    """Provider shapes and random-looking parts inside every run of 20+ token characters."""
    for run in _LONG_TOKEN.finditer(data.translate(_TOKEN_TABLE)):
        start, end = run.span()
        token = data[start:end]
        if not _DIGIT.search(token) and not _UPPER.search(token):
            continue  # real keys always have one (a path or a snake_case name may have neither)
        yield from ((start + s.start(), start + s.end()) for s in PROVIDER_SHAPES.finditer(token))
        if not _may_be_random(token):
            continue
        parts = [(start + s, start + e) for s, e in _random_parts(token.decode("ascii"))]
        if parts and not _KEPT_CONTEXT.search(data, max(0, start - 24), start):
            yield from parts


def _may_be_random(token: bytes) -> bool:
    """A cheap first look: random parts have a digit, or letters of both cases."""
    if _DIGIT.search(token):
        return True
    return _UPPER.search(token) is not None and _LOWER.search(token) is not None


def _random_parts(token: str) -> Iterator[Span]:
    """Parts of a token that look random: runs between ``.:=%``, else their path parts."""
    for candidate in _CANDIDATE.finditer(token):
        start, end = _stripped(token, *candidate.span())
        text = token[start:end]
        if _HASH_LABEL.search(token, max(0, start - 8), start) or _is_data_blob(text):
            continue
        if not _is_path(text) and _is_secret_blob(text):
            yield start, end
        elif "/" in text:
            for part in _PATH_FREE_CANDIDATE.finditer(token, start, end):
                part_start, part_end = _stripped(token, *part.span())
                if _is_secret_blob(token[part_start:part_end]):
                    yield part_start, part_end


def _is_data_blob(candidate: str) -> bool:
    """An image, or base64 too long to be a credential: neither it nor its parts are redacted."""
    return len(candidate) > MAX_LENGTH or candidate.startswith(_IMAGE_PREFIXES)


def _is_path(candidate: str) -> bool:
    """``dist/assets/index-4f8a2c1e``, ``org/Volume_17/PDF``: parts of one case, or short.

    Base64 with ``/`` has both cases and about one ``/`` in 64 characters; where it has more,
    its parts are short too, and only their letters tell it from a path.
    """
    if "/" not in candidate:
        return False
    if candidate.islower() or candidate.isupper():
        return True
    if len(candidate) / (candidate.count("/") + 1) >= _MIN_BASE64_PART:
        return False
    return not looks_random_path(candidate)


def _stripped(token: str, start: int, end: int) -> Span:
    """The span without punctuation at either end."""
    while start < end and token[start] in _PUNCTUATION:
        start += 1
    while end > start and token[end - 1] in _PUNCTUATION:
        end -= 1
    return start, end


def _is_secret_blob(candidate: str) -> bool:
    """A random-looking string, or a base64-encoded private key."""
    if candidate.startswith(BASE64_PEM_PREFIX.decode()):
        return _is_encoded_private_key(candidate)
    return looks_random(candidate)


def _is_encoded_private_key(candidate: str) -> bool:
    """Whether a base64 PEM (``LS0tLS1CRUdJT…``) holds a private key."""
    head = candidate[:96]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return True
    return b"PRIVATE" in decoded or b"SECRET" in decoded


# -- name = value ---------------------------------------------------------------------------------
# Each keyword is searched on its own (a literal search is C-fast; an alternation is not), with
# the rest of the name after it; the name's start is found through a character-class map.
_KEYWORDS = (
    b"pass",
    b"pwd",
    b"secret",
    b"token",
    b"key",
    b"auth",
    b"cred",
    b"sig",
    b"cookie",
    b"code=",
)
_NAME_AFTER_KEYWORD = {
    keyword: re.compile(re.escape(keyword) + rb"[a-z0-9_.\-]{0,48}") for keyword in _KEYWORDS
}
_NAME_AFTER_KEYWORD[b"code="] = re.compile(rb"code(?==)")  # only as a query parameter
_ASSIGNMENT = re.compile(
    rb"""(?:\\?["'`])?[ \t]{0,8}(?P<sep>:=|=>|=|:|>)[ \t]{0,8}
    (?:[fFrRbBuU]{1,2}(?=["'])|)  # Python string prefixes
    (?:\\"(?P<escaped>[^"\\\r\n]{1,2048})
      |"(?P<double>(?:[^"\\\r\n]|\\[^\r\n]){1,2048})
      |'(?P<single>[^'\r\n]{1,2048})
      |`(?P<backtick>[^`\r\n]{1,2048})
      |(?P<bare>[^\s"'`,;&<>\\]{1,1024}))""",
    re.VERBOSE,
)
_VALUE_GROUPS = ("escaped", "double", "single", "backtick", "bare")
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_COMPACT_KEY = re.compile(
    r"(?:api|access|secret|private|account|master|signing|client|auth|encryption|shared)key"
)
_QUERY_PRECEDERS = b"?&#;"
_LINE_PREFIX = re.compile(rb"[ \t]*(?:-[ \t]+)?(?:export[ \t]+|set[ \t]+)?\\?[\"']?")
_PLACEHOLDER = re.compile(
    r"\$\{.*\}|\$\(.*\)|\{\{.*\}\}|<[^<>]*>|%[A-Za-z_]\w*%|\$[A-Z_][A-Z0-9_]*|\*+|[xX]{3,}|\.{3}|…"
    r"|(?:[^{}\s]*\{[^{}]*\})+[^{}\s]*"  # f-string and str.format fields
    r"|(?i:your|my)[-_ ]?[\w-]*"
    r"|\$[({].*|`.*"  # command substitution cut at a space
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # the name of an environment variable
)
# Bare values that are code, when the name is not an UPPER_CASE environment name: a dotted
# reference (digits only with two dots or more: ``Hunter2.Secret`` may be a password), a call or
# subscript, a snake_case or PascalCase name of letters only (real secrets have digits or symbols).
_CODE = re.compile(
    r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}"
    r"|[A-Za-z_][\w.]*[(\[].*|[(\[{].*"
    r"|_*[A-Za-z]+(?:_+[A-Za-z]+)+_*|_[A-Za-z]+|_?[A-Z][A-Za-z]*"
)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CALL = re.compile(r"[A-Za-z_][\w.]*[(\[].*")
_ALPHANUMERIC = re.compile(r"[A-Za-z0-9]")
_LITERAL = re.compile(r"0[xX][0-9A-Fa-f]+|#[0-9A-Fa-f]{3,8}")  # hex numbers, colours
_PLAIN = re.compile(r"[A-Za-z_.-]+")  # a name (``current_context``): random keys have digits
_WEAK = 1
_PROSE_OPENERS = frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "whether",
        "if",
        "when",
        "which",
        "what",
        "how",
        "to",
        "of",
        "for",
        "in",
        "is",
        "are",
        "will",
        "must",
        "should",
        "can",
        "may",
        "used",
        "use",
        "see",
        "optional",
        "only",
        "each",
        "any",
        "all",
        "one",
        "not",
        "returns",
        "default",
    ]
)
_FUNCTION_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "so",
        "as",
        "is",
        "are",
        "be",
        "by",
        "from",
        "that",
        "which",
        "this",
        "it",
        "not",
        "if",
        "when",
    ]
)
_FIRST_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILE_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]+)+|[A-Za-z]:\\[\w.\\ -]+")
_AFTER_SCHEME = re.compile(rb"[ \t]+(?P<credential>[^\s\"'`,;<>\\#][^\s\"'`,;<>\\]{0,4095})")
_LINE_REST = re.compile(rb"[^\r\n]{0,4096}")
_LINE_HEAD = re.compile(rb"[^\r\n]{0,200}")
_LINE_PREFIX_MAX = 64


def _assignment_spans(data: bytes, lower: bytes, first: dict[bytes, int]) -> list[Span]:
    """Values of secret-named assignments, headers and query parameters.

    ``first`` holds where each keyword first occurs (-1: nowhere); each keyword costs one scan.
    """
    names: bytes | None = None
    seen: set[int] = set()
    spans: list[Span] = []
    for keyword, position in first.items():
        after_keyword = _NAME_AFTER_KEYWORD[keyword]
        covered = 0  # a name inside the value found last is part of that value
        while position >= 0:
            hit = after_keyword.match(lower, position)
            end = hit.end() if hit else position + len(keyword)
            if end not in seen and position >= covered:
                seen.add(end)
                names = names if names is not None else data.translate(_NAME_TABLE)
                name_start = names.rfind(b" ", 0, position) + 1
                found = _assignment_value(data, name_start, end)
                covered = max([covered, *(span_end for _, span_end in found)])
                spans += found
            position = lower.find(keyword, max(end, covered))
    return spans


def _assignment_value(data: bytes, name_start: int, name_end: int) -> list[Span]:
    """The secret span(s) of ``name<sep>value`` at ``name_start``, if the name names a secret."""
    match = _ASSIGNMENT.match(data, name_end)
    if not match:
        return []
    preceder = data[name_start - 1 : name_start]
    name = data[name_start:name_end].decode("ascii")
    sep = match.group("sep")
    if sep == b">" and preceder != b"<":
        return []
    query = bool(preceder) and preceder in _QUERY_PRECEDERS
    if not is_secret_name(name, query=query):
        return []
    group = next(g for g in _VALUE_GROUPS if match.group(g) is not None)
    start, end = match.span(group)
    bare = group == "bare"
    if bare and sep == b":" and _is_prose(_line_rest(data, start)):
        return []
    if bare and sep == b":" and _starts_line(data, name_start):  # YAML: the rest of the line
        end = _line_value_end(data, start, end)
    code_like = sep in (b"=", b":=") and name.islower() and not query
    env_style = sep == b"=" and name.isupper() and start == match.start("sep") + 1
    # a query parameter's value is data, never code: ``?sig=RdBYOuipkMmrCpuGMs`` is the secret
    data_value = env_style or (query and sep == b"=")
    return _value_spans(data, name, start, end, bare=bare, code_like=code_like, env=data_value)


def _line_rest(data: bytes, start: int) -> str:
    """The line from ``start``, at most 200 characters of it."""
    rest = _LINE_HEAD.match(data, start)
    return rest.group().decode("ascii") if rest else ""


def _starts_line(data: bytes, name_start: int) -> bool:
    """Whether the name opens its line (YAML ``key: value``, INI ``key = value``)."""
    window = max(0, name_start - _LINE_PREFIX_MAX)
    line_start = data.rfind(b"\n", window, name_start) + 1
    if not line_start and window:
        return False
    return _LINE_PREFIX.fullmatch(data, line_start, name_start) is not None


def _line_value_end(data: bytes, start: int, end: int) -> int:
    """A YAML/INI value runs to the end of its line (before a `` #`` comment)."""
    rest = _LINE_REST.match(data, start)
    line_end = rest.end() if rest else end
    comment = data.find(b" #", start, line_end)
    line_end = comment if comment >= 0 else line_end
    while line_end > end and data[line_end - 1] in b" \t":
        line_end -= 1
    return max(end, line_end)


def _value_spans(
    data: bytes, name: str, start: int, end: int, *, bare: bool, code_like: bool, env: bool
) -> list[Span]:
    """The secret part of a value: after an auth scheme, or all of it unless it holds none."""
    value = data[start:end].decode("ascii")
    scheme, _, credential = value.partition(" ")
    if scheme.lower() in AUTH_SCHEMES:
        if credential.strip():
            span = (start + len(scheme) + 1, end)
        else:
            after = _AFTER_SCHEME.match(data, end) if bare else None
            span = after.span("credential") if after else (end, end)
        credential = data[span[0] : span[1]].decode("ascii")
        return [span] if holds_secret(credential, bare=False) else []
    secret = holds_secret(value, name, bare=bare, code_like=code_like, env=env)
    return [(start, end)] if secret else []


def is_secret_name(name: str, *, query: bool = False) -> bool:
    """Whether ``name`` (``DB_PASS``, ``_authToken``, ``privateKeyId``) names a secret.

    Args:
        name: the name in front of a value, flags' dashes included.
        query: the name is a URL query parameter, where ``key``, ``code`` and ``sig`` count too.
    """
    return name_strength(name, query=query) > 0


_STRONG = 2


def name_strength(name: str, *, query: bool = False) -> int:
    """0: not a secret's name; 1 (weak): an UPPER_CASE ``X_KEY``; 2: a secret's name."""
    words = [word.lower() for word in _NAME_WORD.findall(name)]
    if not words:
        return 0
    compact = "".join(words)
    if compact in NOT_SECRET_NAMES or words[-1] in NAME_MODIFIERS:
        return 0
    if words[0] in NAME_QUANTIFIERS and len(words) > 1:
        return 0
    if query and compact in QUERY_SECRET_NAMES:
        return _STRONG
    if any(word in SECRET_WORDS for word in words) or compact.endswith(SECRET_SUFFIXES):
        return _STRONG
    if _COMPACT_KEY.search(compact) or _qualified_key(words):
        return _STRONG
    return _WEAK if _upper_key(name, words) else 0


def _qualified_key(words: list[str]) -> bool:
    """``api_key``, ``privateKeyId``, ``KEY_BASE``: ``key`` next to a word that makes it secret."""
    pairs = list(zip(words, words[1:], strict=False))
    return any(second == "key" and first in KEY_QUALIFIERS for first, second in pairs) or (
        ("key", "base") in pairs
    )


def _upper_key(name: str, words: list[str]) -> bool:
    """``STRIPE_KEY``: an UPPER_CASE name ending in ``KEY`` that is not ``SORT_KEY``."""
    upper = name.strip("-_.").isupper()
    return upper and words[-1] == "key" and len(words) > 1 and words[-2] not in KEY_NOT_SECRET


def holds_secret(
    value: str, name: str = "", *, bare: bool = True, code_like: bool = False, env: bool = False
) -> bool:
    """Whether an assigned value may be a secret (not a literal, a type, a placeholder or code).

    Args:
        value: the value, quotes removed.
        name: the name it is assigned to.
        bare: the value was not quoted (then ``settings.token``, ``api_key`` and ``AuthTypes``
            are code, unless the name is an UPPER_CASE environment name).
        code_like: the value follows ``=`` after a lower-case name, where a lone lower-case word
            is a variable (``webhook_secret = value``).
        env: an environment assignment (``DB_PASS=x.y``): any bare value may be the secret.
    """
    value = value.strip()
    if _PLACEHOLDER.fullmatch(value):
        return False
    if bare:  # ``f(api_key=api_key)``, ``(using password: YES)``: the bracket closes code
        code_like = code_like or value.endswith((",", ")"))
        value = value.rstrip(",;:)]}")
    if len(value) < 3 or value.startswith(REDACTED) or value.lower() in NOT_SECRET_VALUES:
        return False
    first = _FIRST_WORD.match(value)
    if first and first.group().lower() in NOT_SECRET_VALUES and value[first.end() :][:1] in "|[ ":
        return False
    if _LITERAL.fullmatch(value) or len(_ALPHANUMERIC.findall(value)) < 3 or _is_prose(value):
        return False
    weak = bool(name) and name_strength(name) == _WEAK
    if weak and (_PLAIN.fullmatch(value) or _CALL.fullmatch(value)):  # ``X_KEY = "x.y"``
        return False
    if value.lower() in _name_words(name):  # ``pass_stmt: 'pass'``, ``token=token``
        return False
    if not bare:
        return True
    if _FILE_PATH.fullmatch(value) or _CALL.fullmatch(value):
        return False
    return env or not _is_code(value, name, code_like=code_like)


def _is_code(value: str, name: str, *, code_like: bool) -> bool:
    """``token = self.token``, ``api_key=api_key``, ``signature: Buffer``, ``secret = value``."""
    head = value.split(maxsplit=1)[0]
    if head.lower() in _name_words(name):
        return True
    if code_like and (head.isalpha() and head.islower() or _DOTTED.fullmatch(head)):
        return True
    return _CODE.fullmatch(head) is not None


def _name_words(name: str) -> set[str]:
    """The name and its words, lower-case."""
    return {word.lower() for word in _NAME_WORD.findall(name)} | {name.lower()}


def _is_prose(value: str) -> bool:
    """``auth: The auth to return.``: a docstring or a sentence, not a passphrase."""
    words = value.lower().split()
    if len(words) < 2:
        return False
    if words[0] in _PROSE_OPENERS or (len(words) >= 3 and value.endswith(".")):
        return True
    return len(words) >= 4 and any(word in _FUNCTION_WORDS for word in words)


# -- URLs -----------------------------------------------------------------------------------------
# A password may hold ``#`` or ``?`` written unescaped (an invalid URL, but people write them).
_URL_USERINFO = re.compile(
    rb"://(?P<user>[^\s/?#@:\"'<>\[\]]{0,256})(?::(?P<password>[^\s/\"'<>]{1,256}))?@"
    rb"(?=[A-Za-z0-9\[])"
)
_LONG_USERNAME = 20


def _url_credential_spans(data: bytes) -> Iterator[Span]:
    """Userinfo passwords, and usernames long enough to be keys (``https://<key>@sentry.io``)."""
    for match in _URL_USERINFO.finditer(data):
        if match.group("password"):
            yield match.span("password")
        if len(match.group("user")) >= _LONG_USERNAME:
            yield match.span("user")


def redact_url(url: str) -> str:
    """A URL fit for messages and logs: no password, no secret query parameter, no token.

    >>> redact_url("redis://:s3cret@127.0.0.1:6379/0")
    'redis://:[REDACTED]@127.0.0.1:6379/0'
    """
    cleaned = redact(url)
    try:
        parts = urlsplit(cleaned)
        password = parts.password
    except ValueError:
        return cleaned
    if password in (None, "", REDACTED):
        return cleaned
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username or ''}:{REDACTED}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


# -- command lines and phrases --------------------------------------------------------------------
_FLAG_VALUE = rb"""(?P<value>"[^"\r\n]{1,1024}"|'[^'\r\n]{1,1024}'|[^\s"'`;&|<>]{1,1024})"""
_FLAG = re.compile(
    rb"""[ \t]-(?:-(?P<long>[A-Za-z][A-Za-z0-9_-]{0,40})(?:=|[ \t]+)  # verbose: a space is [ ]
          |(?P<short>[paPwuUk])(?P<short_sep>[ \t]+)?
          |(?P<single>[A-Za-z][A-Za-z0-9_-]{2,40})[ \t]+)"""
    + _FLAG_VALUE,
    re.VERBOSE,
)
_SINGLE_DASH_FLAG = re.compile(rb" -(?P<single>[A-Za-z][A-Za-z0-9_-]{2,40})[ \t]+" + _FLAG_VALUE)
_USER_FLAGS = frozenset({b"user", b"proxy-user", b"auth", b"http-user", b"basic-auth"})
_FLAG_HINT = re.compile(rb"(?i)pass|pwd|secret|token|key|auth|cred|sig|cookie|user")
_NUMERIC_IDS = re.compile(rb"[0-9]+:[0-9]+")
_COMMAND_WINDOW = 512


def _command_line_spans(data: bytes, *, named: bool) -> Iterator[Span]:
    """Credentials given as command-line flags; ``named``: a secret's name may be in the text."""
    for flag in _FLAG.finditer(data):
        start, end, value = _flag_value(data, flag)
        long_name = flag.group("long") or flag.group("single")
        if long_name:
            user_flag = long_name.lower() in _USER_FLAGS
            if (named or user_flag) and _FLAG_HINT.search(long_name):
                yield from _long_flag_spans(long_name.decode(), value, start, end)
            continue
        spans = list(_short_flag_spans(data, flag, value, start, end))
        hinted = named and not spans and _FLAG_HINT.search(data, flag.start(), flag.end())
        single = _SINGLE_DASH_FLAG.match(data, flag.start()) if hinted else None
        if single:  # ``-pass x``, ``-keypass x``: a word flag that starts with a short one
            spans = list(_long_flag_spans(single.group("single").decode(), *_value_of(single)))
        yield from spans


def _flag_value(data: bytes, flag: re.Match[bytes]) -> tuple[int, int, bytes]:
    """A flag's value span and bytes, its quotes removed."""
    start, end = flag.span("value")
    if data[start : start + 1] in (b'"', b"'"):
        start, end = start + 1, end - 1
    return start, end, data[start:end]


def _value_of(flag: re.Match[bytes]) -> tuple[bytes, int, int]:
    """``(value, start, end)`` of a flag match, quotes removed."""
    start, end, value = _flag_value(flag.string, flag)
    return value, start, end


def _long_flag_spans(name: str, value: bytes, start: int, end: int) -> Iterator[Span]:
    """``--password x``, ``--token=x``; ``--user name:password``.

    ``--no-…`` switches a thing off and takes no value (``--no-auth-warning ping``).
    """
    if value.startswith(b"-") or name.lower().startswith("no-"):
        return
    if name.lower().encode() in _USER_FLAGS:
        yield from _after_separator(value, start, b":")
    elif is_secret_name(name) and holds_secret(value.decode("ascii", "replace"), name):
        yield start, end


def _short_flag_spans(
    data: bytes, flag: re.Match[bytes], value: bytes, start: int, end: int
) -> Iterator[Span]:
    """``-u user:pass`` anywhere; ``-pSECRET``, ``-a x``, ``-P x``, ``-w x`` for their commands."""
    letter = flag.group("short")
    if letter in (b"u", b"U", b"a") and not _NUMERIC_IDS.fullmatch(value):
        separator = b"%" if letter == b"U" and b"%" in value else b":"
        spans = list(_after_separator(value, start, separator))
        if spans:
            yield from spans
            return
    key = letter + (b" " if letter == b"p" and flag.group("short_sep") else b"")
    command = PASSWORD_FLAGS.get(key)
    window = max(0, flag.start() - _COMMAND_WINDOW)
    line_start = data.rfind(b"\n", window, flag.start()) + 1 or window
    if command and command.search(data, line_start, flag.start() + 1):
        yield start, end


def _after_separator(value: bytes, start: int, separator: bytes) -> Iterator[Span]:
    """The part of ``user<separator>secret`` after the separator."""
    index = value.find(separator)
    if index > 0 and index + 1 < len(value):
        yield start + index + 1, start + len(value)


# (gate, needs "pass" somewhere, pattern): a phrase is looked for only where its gate occurs.
# (gate, needs "pass" somewhere, pattern): a phrase is looked for only where its gate occurs.
_PHRASES = (
    (b"bearer", False, re.compile(rb"bearer[ \t]+([a-z0-9._~+/=-]{12,})")),
    (
        b"identified",
        False,
        re.compile(rb"identified\s+(?:by|with\s+\w+\s+by)\s+['\"]([^'\"\r\n]{1,256})"),
    ),
    (b"password", True, re.compile(rb"password\s+(?:'([^'\r\n]{1,256})'|\"([^\"\r\n]{1,256})\")")),
    (b"machine", True, re.compile(rb"machine\s+\S+\s+login\s+\S+\s+password\s+(\S+)")),
)
# Go's MySQL DSN, user:password@tcp(host:port)/db: found by its "@tcp(", read backwards.
_DSN_PROTOCOL = re.compile(rb"@(?:tcp|unix)\(")
_DSN_USERINFO = re.compile(rb"[\w.-]{1,64}:([^\s@\"'/]{1,256})\Z")


# ``Pwd=…`` in an ADO.NET or ODBC connection string (``PWD`` alone is the shell's working
# directory, so it counts only beside another key of such a string).
_CONNECTION_STRING_KEY = re.compile(
    rb"(?:^|[;\s\"'{])(?:server|data source|uid|user id|initial catalog|database|driver)\s*="
)
_CONNECTION_STRING_PWD = re.compile(rb"(?:^|[;\s\"'{])pwd\s*=\s*(?P<value>[^;\"'\r\n]{1,512})")


def _connection_string_spans(lower: bytes) -> Iterator[Span]:
    """The password of a connection string's ``Pwd=`` pair."""
    if _CONNECTION_STRING_KEY.search(lower) is None:
        return
    for match in _CONNECTION_STRING_PWD.finditer(lower):
        yield match.span("value")


def _phrase_spans(lower: bytes, *, has_pass: bool) -> Iterator[Span]:
    """SQL ``IDENTIFIED BY '…'``/``PASSWORD '…'``, ``.netrc`` lines, ``Bearer …``, Go DSNs."""
    for gate, needs_pass, phrase in _PHRASES:
        if (has_pass or not needs_pass) and gate in lower:
            for match in phrase.finditer(lower):
                yield match.span(match.lastindex or 1)
    for protocol in _DSN_PROTOCOL.finditer(lower):
        start = protocol.start()
        userinfo = _DSN_USERINFO.search(lower, max(0, start - 330), start)
        if userinfo:
            yield userinfo.span(1)


# -- mappings and logs ----------------------------------------------------------------------------
def redact_fields(
    values: Mapping[str, Any], *, keep: Collection[str] = frozenset()
) -> dict[str, Any]:
    """A copy of ``values`` with every string redacted, in nested lists, tuples and mappings too.

    Apply it to an event's fields before construction (summary, body, refs, key, keywords …).

    Args:
        values: field name to value; the top-level names are kept as they are.
        keep: top-level fields left untouched (ids that must stay joinable).
    """
    return {name: value if name in keep else _redacted(value) for name, value in values.items()}


def _redacted(value: Any) -> Any:
    """``value`` with every string inside it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {_redacted(key): _redacted(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return type(value)(_redacted(item) for item in value)
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message, arguments, traceback and stack.

    Attach it to handlers (``handler.addFilter(RedactingFilter())``), or to a logger for the
    records logged on that logger itself (:func:`redacted_logger`): a logger's own filters do
    not see records propagated from its children. It never drops a record. The traceback is
    kept as redacted text only, so a handler that renders ``exc_info`` itself (rich's) cannot
    show the original.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the formatted message in place (arguments are folded into it)."""
        try:
            message = record.getMessage()
        except (TypeError, ValueError, KeyError):  # a broken format: its parts apart, redacted
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redacted_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with a :class:`RedactingFilter` on it (added once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(existing, RedactingFilter) for existing in logger.filters):
        logger.addFilter(RedactingFilter())
    return logger


def redact_process_output(level: int = logging.WARNING) -> None:
    """For plait's own commands: every log record on stderr, and a crash's traceback, redacted.

    Adds one handler to the root logger (a second call adds none), so records of every library
    pass the filter; an uncaught exception is printed redacted too.
    """
    root = logging.getLogger()
    if not any(isinstance(f, RedactingFilter) for h in root.handlers for f in h.filters):
        handler = logging.StreamHandler(sys.stderr)
        handler.addFilter(RedactingFilter())
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
        root.setLevel(level)
    sys.excepthook = _redacted_excepthook


def _redacted_excepthook(
    kind: type[BaseException], error: BaseException, trace: TracebackType | None
) -> None:
    """Print an uncaught exception's traceback with its secrets redacted."""
    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


__all__ = [
    "REDACTED",
    "RedactingFilter",
    "holds_secret",
    "is_secret_name",
    "name_strength",
    "redact",
    "redact_fields",
    "redact_process_output",
    "redacted_logger",
    "redact_secrets",
    "redact_url",
    "secret_spans",
    "strip_private",
]
