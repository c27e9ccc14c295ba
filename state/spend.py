"""What the knowledge graph's LLM spent today: calls, tokens, an estimated cost, and the cap.

Pure values and rules; the ledger that counts (:mod:`plait.adapters.backends.graphiti.spend`)
keeps one :class:`DailySpend` per UTC day in the hot tier's cache, where ``plait doctor`` reads
it. Past ``llm.daily_call_cap`` or ``llm.daily_token_cap`` the drain extracts with the offline
extractor until the day ends, and says so once.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from plait.state.base.settings import ProviderSettings

SPEND_TTL_SECONDS = 3 * 86_400
CHARS_PER_TOKEN = 4


class DailySpend(BaseModel):
    """One UTC day's LLM use by the knowledge graph (tokens estimated from text length)."""

    day: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    capped_noted: bool = False

    def plus(self, input_tokens: int, output_tokens: int) -> DailySpend:
        """This day with one more call."""
        return self.model_copy(
            update={
                "calls": self.calls + 1,
                "input_tokens": self.input_tokens + input_tokens,
                "output_tokens": self.output_tokens + output_tokens,
            }
        )


def day_of(when: datetime) -> str:
    """The UTC day a spend belongs to, ``YYYY-MM-DD``."""
    return f"{when:%Y-%m-%d}"


def spend_cache_key(day: str) -> str:
    """Where a day's spend is kept in the hot tier's cache."""
    return f"spend:llm:{day}"


def estimated_tokens(text: str) -> int:
    """A text's tokens, estimated at four characters a token (at least one)."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def estimated_usd(spend: DailySpend, llm: ProviderSettings) -> float:
    """The day's cost at the configured prices per million tokens."""
    return (
        spend.input_tokens * llm.usd_per_million_input_tokens
        + spend.output_tokens * llm.usd_per_million_output_tokens
    ) / 1_000_000


def over_cap(spend: DailySpend, llm: ProviderSettings) -> bool:
    """Whether the day has used up its calls or tokens (a cap of 0 is no cap)."""
    calls = llm.daily_call_cap and spend.calls >= llm.daily_call_cap
    tokens = llm.daily_token_cap and spend.input_tokens + spend.output_tokens >= llm.daily_token_cap
    return bool(calls or tokens)


def describe_spend(spend: DailySpend, llm: ProviderSettings) -> str:
    """One line for ``plait doctor``: calls, tokens, estimated cost, and the caps."""
    tokens = spend.input_tokens + spend.output_tokens
    caps = [
        f"{llm.daily_call_cap:,} calls" if llm.daily_call_cap else "",
        f"{llm.daily_token_cap:,} tokens" if llm.daily_token_cap else "",
    ]
    cap = " or ".join(c for c in caps if c) or "none"
    line = (
        f"today {spend.calls:,} LLM calls, {tokens:,} tokens (estimated), "
        f"≈ ${estimated_usd(spend, llm):.2f}; cap: {cap}"
    )
    capped = "; cap reached: the drain uses the offline extractor" if over_cap(spend, llm) else ""
    return line + capped


__all__ = [
    "SPEND_TTL_SECONDS",
    "DailySpend",
    "day_of",
    "describe_spend",
    "estimated_tokens",
    "estimated_usd",
    "over_cap",
    "spend_cache_key",
]
