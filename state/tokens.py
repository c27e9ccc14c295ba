"""Per-user tokens of a service a team shares: the record, its digest, the check, a rate bucket.

A token is shown once, when it is made; plait keeps only its SHA-256 digest (a token is 32 random
bytes, so a fast digest is as safe as a slow one and keeps every request's check cheap). A token
names its user and the projects it may read and write (``*``: all of this service's projects), and
a request rate; revoking it takes effect on the next request. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

TOKEN_PREFIX = "plait_"
ALL_PROJECTS = "*"


def new_token() -> str:
    """A fresh token: ``plait_`` and 43 URL-safe characters (32 random bytes)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """The SHA-256 hex digest a token is kept as."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenRecord(BaseModel):
    """One user's token, as it is kept (its digest, never the token)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Short public id, for listing and revoking.")
    user: str = Field(min_length=1, description="Who the token is for.")
    digest: str = Field(description="SHA-256 hex digest of the token.")
    projects: tuple[str, ...] = Field(description="Project keys it may use; '*' for all.")
    rate_per_minute: int = Field(ge=1, description="Requests a minute before 429.")
    created_at: datetime
    revoked_at: datetime | None = None

    def admits(self, project_key: str) -> bool:
        """Whether this token may read and write the project."""
        return ALL_PROJECTS in self.projects or project_key in self.projects


class Verdict(StrEnum):
    """What a presented token is worth for one project."""

    ADMITTED = "admitted"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    OTHER_PROJECT = "other_project"


def judge(
    records: list[TokenRecord], token: str, project_key: str
) -> tuple[Verdict, TokenRecord | None]:
    """The verdict on ``token`` for ``project_key`` (digests compared in constant time)."""
    digest = token_digest(token)
    found = next((r for r in records if hmac.compare_digest(r.digest, digest)), None)
    if found is None:
        return Verdict.UNKNOWN, None
    if found.revoked_at is not None:
        return Verdict.REVOKED, found
    if not found.admits(project_key):
        return Verdict.OTHER_PROJECT, found
    return Verdict.ADMITTED, found


def make_record(
    token: str,
    *,
    user: str,
    projects: tuple[str, ...],
    rate_per_minute: int,
    now: datetime | None = None,
) -> TokenRecord:
    """The record kept for a new token."""
    return TokenRecord(
        id="tok_" + token_digest(token)[:10],
        user=user,
        digest=token_digest(token),
        projects=projects or (ALL_PROJECTS,),
        rate_per_minute=rate_per_minute,
        created_at=now or datetime.now(UTC),
    )


@dataclass
class RateBuckets:
    """A token bucket per token id: ``rate_per_minute`` requests a minute, bursts up to it."""

    levels: dict[str, tuple[float, float]] = field(default_factory=dict)  # id -> (tokens, time)

    def take(self, record: TokenRecord, now: float) -> float:
        """Take one request; 0 when allowed, else the seconds until one is allowed."""
        capacity = float(record.rate_per_minute)
        per_second = capacity / 60
        tokens, last = self.levels.get(record.id, (capacity, now))
        tokens = min(capacity, tokens + (now - last) * per_second)
        if tokens >= 1:
            self.levels[record.id] = (tokens - 1, now)
            return 0.0
        self.levels[record.id] = (tokens, now)
        return (1 - tokens) / per_second


__all__ = [
    "ALL_PROJECTS",
    "TOKEN_PREFIX",
    "RateBuckets",
    "TokenRecord",
    "Verdict",
    "judge",
    "make_record",
    "new_token",
    "token_digest",
]
