"""Count what graphiti-core's LLM spends, per day, in the hot tier's cache.

:func:`meter_llm` wraps an LLM client's ``generate_response`` so every call is added to a
:class:`SpendLedger` (tokens estimated from the prompt's and the answer's length, the same way
for every provider). The ledger keeps the day's :class:`~plait.state.spend.DailySpend` in the
cache (read-modify-write: several workers may undercount a little, never block each other).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from plait.state.ports import Cache
from plait.state.spend import (
    SPEND_TTL_SECONDS,
    DailySpend,
    day_of,
    estimated_tokens,
    spend_cache_key,
)


def utc_now() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


class SpendLedger:
    """The day's LLM spend: kept in ``cache`` when given, else in this process only."""

    def __init__(self, cache: Cache | None = None, clock: Callable[[], datetime] = utc_now) -> None:
        """An empty ledger."""
        self.cache = cache
        self.clock = clock
        self._local: dict[str, DailySpend] = {}
        self._lock = asyncio.Lock()

    async def today(self) -> DailySpend:
        """What today has spent so far."""
        day = day_of(self.clock())
        if self.cache is not None:
            raw = await self.cache.get_cache(spend_cache_key(day))
            if raw:
                return DailySpend.model_validate_json(raw)
        return self._local.get(day) or DailySpend(day=day)

    async def _save(self, spend: DailySpend) -> None:
        self._local = {spend.day: spend}
        if self.cache is not None:
            await self.cache.put_cache(
                spend_cache_key(spend.day), spend.model_dump_json(), SPEND_TTL_SECONDS
            )

    async def add(self, input_tokens: int, output_tokens: int) -> DailySpend:
        """Count one call."""
        async with self._lock:
            spend = (await self.today()).plus(input_tokens, output_tokens)
            await self._save(spend)
            return spend

    async def note_capped(self) -> bool:
        """Mark today as capped; True the first time (say it once)."""
        async with self._lock:
            spend = await self.today()
            if spend.capped_noted:
                return False
            await self._save(spend.model_copy(update={"capped_noted": True}))
            return True


def text_of(messages: Any) -> str:
    """The text of graphiti-core's prompt messages."""
    return "\n".join(str(getattr(message, "content", message)) for message in messages or [])


def meter_llm(client: Any, ledger: SpendLedger) -> Any:
    """``client`` with every ``generate_response`` call counted in ``ledger``; returned."""
    original = client.generate_response

    async def generate_response(messages: Any, *args: Any, **kwargs: Any) -> Any:
        answer = await original(messages, *args, **kwargs)
        await ledger.add(
            estimated_tokens(text_of(messages)), estimated_tokens(json.dumps(answer, default=str))
        )
        return answer

    client.generate_response = generate_response
    return client


__all__ = ["SpendLedger", "meter_llm", "text_of"]
