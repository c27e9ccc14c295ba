"""Privacy: strip ``<private>`` spans and redact secrets before anything is stored or sent.

Pure and idempotent: ``redact(redact(text)) == redact(text)``. The patterns err on the side of
redacting: a masked harmless value costs little, a stored key costs a rotation.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"
PRIVATE_SPAN = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.DOTALL | re.IGNORECASE)
STRAY_PRIVATE_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)

# Shapes that are secrets wherever they appear.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"),  # Anthropic
    re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),  # OpenAI
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),  # GitLab
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
)
# "Authorization: Bearer x", "Bearer x", "Authorization: Basic x": the scheme stays, x goes.
AUTH_HEADER = re.compile(
    r"(?P<head>\b(?:authorization\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)?|bearer)\s+)"
    r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    re.IGNORECASE,
)
URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)(?P<secret>[^\s@/]+)(?=@)")
# NAME=value, NAME: value, "name": "value" for names that say they hold a secret.
SECRET_ASSIGNMENT = re.compile(
    r"(?P<name>\b[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|"
    r"ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|_KEY|AUTH)\b[\"']?)"
    r"(?P<sep>\s*(?::=|=|:)\s*)(?P<quote>[\"']?)"
    r"(?!(?:true|false|none|null|str|int|bool|bytes|optional)\b|\[REDACTED\])"
    r"(?P<value>[^\s\"',;]{4,})",
    re.IGNORECASE,
)


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` spans (an unclosed one runs to the end)."""
    return STRAY_PRIVATE_CLOSE.sub("", PRIVATE_SPAN.sub("", text))


def redact_secrets(text: str) -> str:
    """Replace secrets (keys, tokens, URL passwords, secret assignments) with a marker."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = AUTH_HEADER.sub(lambda m: m.group("head") + REDACTED, text)
    text = URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED, text)
    return SECRET_ASSIGNMENT.sub(
        lambda m: f"{m.group('name')}{m.group('sep')}{m.group('quote')}{REDACTED}", text
    )


def redact(text: str) -> str:
    """Strip private spans, then redact secrets. Safe on any ``str`` (lone surrogates too)."""
    if not text:
        return text
    return redact_secrets(strip_private(text))


__all__ = ["REDACTED", "redact", "redact_secrets", "strip_private"]
