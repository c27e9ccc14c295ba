"""A service a team shares: per-user bearer tokens, checked beside the owner's token.

The owner's token (``<data_dir>/token``) opens everything, as before. A token made with ``plait
token create`` opens only the projects it names and only at its rate: an unknown or revoked token
is 401, a token of another project 403, a token over its rate 429 with ``Retry-After``. The tokens
themselves are kept by a backend (``plait.adapters.backends.tokens``); this guard is handed the
check, so the host never reads the store.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from plait.state.tokens import RateBuckets, TokenRecord, Verdict

Judge = Callable[[str, str], tuple[Verdict, TokenRecord | None]]


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """Why a request with a team token is refused, as the HTTP answer says it."""

    status: int
    error: str
    detail: str
    retry_after_s: int | None = None


REFUSALS = {
    Verdict.UNKNOWN: Refusal(status=401, error="unauthorized", detail="unknown bearer token"),
    Verdict.REVOKED: Refusal(status=401, error="unauthorized", detail="this token was revoked"),
    Verdict.OTHER_PROJECT: Refusal(
        status=403, error="forbidden", detail="this token does not give access to this project"
    ),
}


@dataclass
class TeamTokens:
    """Admits a request carrying a user's token for this service's project, within its rate."""

    judge: Judge
    project_key: str
    clock: Callable[[], float] = time.monotonic
    buckets: RateBuckets = field(default_factory=RateBuckets)

    def admit(self, token: str | None) -> tuple[TokenRecord | None, Refusal | None]:
        """The token's record when admitted, else the refusal."""
        if not token:
            return None, REFUSALS[Verdict.UNKNOWN]
        verdict, record = self.judge(token, self.project_key)
        if verdict is not Verdict.ADMITTED or record is None:
            return record, REFUSALS[verdict]
        wait = self.buckets.take(record, self.clock())
        if wait > 0:
            detail = f"token {record.id} is over its rate ({record.rate_per_minute} a minute)"
            refusal = Refusal(
                status=429, error="rate_limited", detail=detail, retry_after_s=math.ceil(wait)
            )
            return record, refusal
        return record, None


__all__ = ["Judge", "Refusal", "TeamTokens"]
