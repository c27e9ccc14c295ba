"""The ``memory_*`` tools, host-neutral: arguments in, a JSON-ready answer out.

The MCP server, the LangChain tools and the HTTP API all call :class:`MemoryToolbox`, so the
ten tools take the same arguments and answer the same JSON everywhere. Every answer names the
observation's ``id`` where there is one; search answers are bounded (at most 20 results, short
snippets, :data:`SEARCH_BUDGET_BYTES` in all, ``truncated`` when cut); ``memory_get`` gives the
whole observation with its revisions. Bad arguments are a :class:`~plait.UsageError`
naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from plait.nodes.observations import snippet
from plait.observations import Observations, SaveResult, listing
from plait.state.base.errors import UsageError
from plait.state.events import clean_text, repaired
from plait.state.observations import (
    OBSERVATION_TYPES,
    Observation,
    ObservationSource,
    Scope,
    check_draft,
    check_id,
    check_scope,
    check_type,
)

TOOL_NAMES = (
    "memory_save",
    "memory_search",
    "memory_get",
    "memory_update",
    "memory_delete",
    "memory_timeline",
    "memory_context",
    "memory_stats",
    "memory_session_summary",
    "memory_suggest_topic_key",
)
SEARCH_LIMIT_DEFAULT = 5
SEARCH_LIMIT_MAX = 20
TIMELINE_LIMIT_MAX = 50
SEARCH_BUDGET_BYTES = 6000
QUERY_MAX_CHARS = 1000

Answer = dict[str, Any]


class Arguments:
    """A tool's arguments, read one by one; what is left over is an error naming it."""

    def __init__(self, tool: str, values: Mapping[str, Any] | None) -> None:
        """Wrap the arguments a host passed (``None`` values count as absent)."""
        if values is not None and not isinstance(values, Mapping):
            raise UsageError(f"{tool}: arguments must be an object")
        self.tool = tool
        self.values = {k: v for k, v in (values or {}).items() if v is not None}

    def take(self, name: str, *, required: bool = False) -> Any:
        """One argument (None when absent); a required one that is absent is an error."""
        value = self.values.pop(name, None)
        if required and (value is None or (isinstance(value, str) and not value.strip())):
            raise UsageError(f"{name}: missing")
        return value

    def text(self, name: str, *, required: bool = False) -> str | None:
        """A string argument."""
        value = self.take(name, required=required)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{name}: give text, not {type(value).__name__}")
        return value

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        """An integer argument within [low, high]."""
        value = self.take(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise UsageError(f"{name}: give a whole number from {low} to {high}")
        if not low <= int(value) <= high:
            raise UsageError(f"{name}: {int(value)} is outside {low}..{high}")
        return int(value)

    def done(self) -> None:
        """Fail on arguments the tool does not take."""
        if self.values:
            unknown = ", ".join(sorted(self.values))
            raise UsageError(f"{self.tool}: unknown argument(s) {unknown}")


def full(observation: Observation) -> Answer:
    """The whole observation, revisions included, as JSON-ready data."""
    return observation.model_dump(mode="json", exclude_none=True)


def saved(result: SaveResult) -> Answer:
    """The answer of a save."""
    observation = result.observation
    answer = {
        **listing(observation),
        "action": result.action,
        "revision": observation.revision,
    }
    if result.superseded:
        answer["superseded"] = list(result.superseded)
    return answer


def bounded(entries: list[Answer], budget: int) -> tuple[list[Answer], bool]:
    """The first entries that fit ``budget`` bytes of JSON, and whether any were cut."""
    kept: list[Answer] = []
    used = 0
    for entry in entries:
        size = len(json.dumps(entry, ensure_ascii=False).encode())
        if used + size > budget:
            return kept, True
        kept.append(entry)
        used += size
    return kept, False


def optional_scope(value: str | None) -> Scope | None:
    """A scope argument, or None for both."""
    return None if value is None else check_scope(value)


class MemoryToolbox:
    """The ten ``memory_*`` tools over a project's observations."""

    def __init__(self, observations: Observations, *, host: str) -> None:
        """``host`` names who calls (``mcp``, ``langchain``, ``http``) in each saved source."""
        self.observations = observations
        self.host = host
        self._tools: dict[str, Callable[[Arguments, str], Awaitable[Answer]]] = {
            name: getattr(self, name) for name in TOOL_NAMES
        }

    async def call(self, name: str, arguments: Mapping[str, Any] | None, session: str) -> Answer:
        """Run one tool for ``session``; its JSON-ready answer."""
        tool = self._tools.get(name)
        if tool is None:
            raise UsageError(f"no memory tool {name!r} (one of {', '.join(TOOL_NAMES)})")
        # text that is not Unicode (a lone surrogate from JSON, MCP or a host) is U+FFFD here,
        # at the one door every memory tool comes through: never a crash, never dropped
        cleaned = repaired(dict(arguments or {}))
        return await tool(Arguments(name, cleaned), clean_text(session))

    def source(self, session: str) -> ObservationSource:
        """Who saves: this host, in this session."""
        return ObservationSource(kind="tool", name=self.host, session_id=session)

    async def memory_save(self, args: Arguments, session: str) -> Answer:
        """Save an observation; the same topic_key updates it."""
        draft = check_draft(
            title=args.take("title", required=True),
            content=args.take("content", required=True),
            type=args.take("type"),
            scope=args.take("scope"),
            topic_key=args.take("topic_key"),
            files=args.take("files"),
            source=self.source(session),
        )
        args.done()
        return saved(await self.observations.save(draft))

    async def memory_search(self, args: Arguments, session: str) -> Answer:
        """Search observations (current ones unless ``all``), bounded."""
        query = (args.text("query", required=True) or "")[:QUERY_MAX_CHARS]
        kind = args.text("type")
        limit = args.integer("limit", SEARCH_LIMIT_DEFAULT, 1, SEARCH_LIMIT_MAX)
        scope = optional_scope(args.text("scope"))
        everything = bool(args.take("all"))
        args.done()
        found = await self.observations.search(
            query,
            limit=limit,
            types=(check_type(kind),) if kind else (),
            scope=scope,
            include_superseded=everything,
        )
        entries = [
            {**listing(o), "score": round(min(score, 1e6), 3), "snippet": snippet(o)}
            for o, score in found
        ]
        results, truncated = bounded(entries, SEARCH_BUDGET_BYTES)
        return {"query": query, "results": results, "truncated": truncated}

    async def memory_get(self, args: Arguments, session: str) -> Answer:
        """The whole observation with its revisions."""
        observation_id = check_id(args.take("id", required=True))
        args.done()
        return full(await self.observations.get(observation_id))

    async def memory_update(self, args: Arguments, session: str) -> Answer:
        """Change an observation; the old version is kept as a revision."""
        observation_id = check_id(args.take("id", required=True))
        changes = {name: args.take(name) for name in ("title", "content", "type", "topic_key")}
        args.done()
        if all(value is None for value in changes.values()):
            raise UsageError("memory_update: give at least one of title, content, type, topic_key")
        updated = await self.observations.update(
            observation_id, **changes, source=self.source(session)
        )
        return {**listing(updated), "action": "updated", "revision": updated.revision}

    async def memory_delete(self, args: Arguments, session: str) -> Answer:
        """Forget an observation."""
        observation_id = check_id(args.take("id", required=True))
        args.done()
        forgotten = await self.observations.delete(observation_id)
        return {**listing(forgotten), "action": "deleted"}

    async def memory_timeline(self, args: Arguments, session: str) -> Answer:
        """Observations around one, or the latest."""
        raw_id = args.take("id")
        limit = args.integer("limit", 10, 1, TIMELINE_LIMIT_MAX)
        args.done()
        anchor = check_id(raw_id) if raw_id is not None else None
        return await self.observations.timeline(anchor, limit=limit)

    async def memory_context(self, args: Arguments, session: str) -> Answer:
        """Recent sessions' summaries and the latest observations."""
        args.done()
        return await self.observations.context()

    async def memory_stats(self, args: Arguments, session: str) -> Answer:
        """Counts of saved memory."""
        args.done()
        return await self.observations.stats()

    async def memory_session_summary(self, args: Arguments, session: str) -> Answer:
        """Save this session's summary; it replaces the automatic one."""
        content = args.take("content", required=True)
        title = args.take("title")
        args.done()
        result = await self.observations.session_summary(
            session, content, title=title, source_name=f"agent:{self.host}"
        )
        return saved(result)

    async def memory_suggest_topic_key(self, args: Arguments, session: str) -> Answer:
        """A stable topic_key for a title and type."""
        title = args.take("title", required=True)
        kind = args.text("type")
        args.done()
        return await self.observations.suggest_topic_key(title, kind)


def answer_text(answer: Answer) -> str:
    """An answer as compact JSON text."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


__all__ = [
    "OBSERVATION_TYPES",
    "TOOL_NAMES",
    "Arguments",
    "MemoryToolbox",
    "answer_text",
    "full",
]
