"""Privacy: strip ``<private>`` spans and redact secrets before anything is stored or sent."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"
PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
    ),
    re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}"),
)
URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)(?P<secret>[^\s@/]+)(?=@)")
SECRET_ASSIGNMENT = re.compile(
    r"(?P<name>\b[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)"
    r"[A-Za-z0-9_]*)(?P<sep>\s*[=:]\s*)(?P<quote>[\"']?)(?P<value>[^\s\"']{4,})",
    re.IGNORECASE,
)


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` spans (an unclosed one runs to the end)."""
    return PRIVATE_SPAN.sub("", text)


def redact(text: str) -> str:
    """Strip private spans and replace secrets (keys, tokens, URL passwords) with a marker."""
    if not text:
        return text
    cleaned = strip_private(text)
    for pattern in SECRET_PATTERNS:
        cleaned = pattern.sub(REDACTED, cleaned)
    cleaned = URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED, cleaned)
    return SECRET_ASSIGNMENT.sub(
        lambda m: f"{m.group('name')}{m.group('sep')}{m.group('quote')}{REDACTED}", cleaned
    )


__all__ = ["REDACTED", "redact", "strip_private"]
