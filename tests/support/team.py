"""A team of two for a service a team shares: alice and bob, each admitted by their token.

``judge`` stands in for the token book (``plait token``): ``alice-token`` and ``bob-token`` open
every project; any other token is unknown.
"""

from __future__ import annotations

from datetime import UTC, datetime

from plait.adapters.hosts.http.team import TeamTokens
from plait.state.tokens import TokenRecord, Verdict

MEMBERS = ("alice", "bob")


def member(user: str) -> TokenRecord:
    """The token record of ``user``."""
    now = datetime.now(UTC)
    return TokenRecord(
        id=f"t_{user}", user=user, digest="-", projects=("*",), rate_per_minute=1000, created_at=now
    )


def judge(token: str, project: str) -> tuple[Verdict, TokenRecord | None]:
    """``<user>-token`` admits a member; anything else is unknown."""
    user = token.removesuffix("-token")
    return (Verdict.ADMITTED, member(user)) if user in MEMBERS else (Verdict.UNKNOWN, None)


def team() -> TeamTokens:
    """The team's tokens, as the service checks them."""
    return TeamTokens(judge=judge, project_key="p")


__all__ = ["MEMBERS", "judge", "member", "team"]
