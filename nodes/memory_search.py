"""What plait serves for a long-term memory query: one search for refresh, recall and the bench.

:func:`search_memory` is the only search behind the cache refresh, ``Memory.search`` and
``Memory.recall`` (so ``plait recall`` and the MCP ``memory_recall`` tool) and ``plait bench
recall``:

1. events still waiting in the drain queue for the groups are indexed first (idempotent), so
   what was said or remembered a moment ago is found before any drain;
2. the recall index ranks every turn (:func:`plait.state.ranking.rank_turns`; with the query's
   vector when an embedder is configured and answers);
3. the knowledge graph's facts and entities follow: each fact right after the best-ranked turn
   it was read from (so a fact never pushes a better turn down), the others after every turn.

:func:`prefetch_memory` is what a new session starts with before it has asked anything: the
project's newest decisions, rules and preferences, and the user's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from plait.nodes.statements import shared_turn
from plait.state.base.boundary import attempt
from plait.state.base.errors import PlaitError
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext
from plait.state.events import EventKind, truncate_utf8
from plait.state.groups import acting_user, user_group_id
from plait.state.ports import MemoryHit
from plait.state.recall import TurnHit, queued_turns

logger = logging.getLogger("plait")

TURN_DEPTH = 50
QUEUE_PEEK_MAX = 2000
HIT_TEXT_MAX_BYTES = 400
PREFETCH_KINDS = (EventKind.DECISION.value, EventKind.RULE.value, EventKind.PREFERENCE.value)


def recall_groups(group_id: str, settings: Settings) -> list[str]:
    """The groups a recall searches: the project's, and its user's preferences."""
    graphiti = settings.graphiti
    user = acting_user(graphiti.resolved_user())
    return [group_id, user_group_id(graphiti.group_id_prefix, user)]


def turn_memory_hit(hit: TurnHit) -> MemoryHit:
    """A found turn as a memory hit: its kind is the event's (``decision``, ``prompt`` …).

    A fact's hit names the turn it was read from after its own (``episodes``).
    """
    turn = hit.turn
    return MemoryHit(
        uuid=turn.id,
        kind=turn.kind,
        text=truncate_utf8(" ".join(turn.text.split()), HIT_TEXT_MAX_BYTES),
        score=hit.score,
        valid_at=turn.said_at,
        invalid_at=hit.replaced_at,
        group_id=turn.group_id,
        episodes=(turn.id, hit.said_in) if hit.said_in else (turn.id,),
        parts=dict(hit.parts),
    )


def place_facts(turns: Sequence[MemoryHit], facts: Sequence[MemoryHit]) -> list[MemoryHit]:
    """Turns in their order, each followed by the graph hits read from it; the rest at the end.

    A graph hit goes after the first turn among its ``episodes``; hits from no listed turn keep
    their own order after every turn.
    """
    after: dict[str, list[MemoryHit]] = {}
    rest: list[MemoryHit] = []
    shown = {turn.uuid for turn in turns}
    for fact in facts:
        source = next((uuid for uuid in fact.episodes if uuid in shown), None)
        if source is None:
            rest.append(fact)
        else:
            after.setdefault(source, []).append(fact)
    placed: list[MemoryHit] = []
    for turn in turns:
        placed.append(turn)
        placed.extend(after.get(turn.uuid, []))
    return [*placed, *rest]


async def index_queued(context: PlaitContext, group_ids: Sequence[str]) -> int:
    """Index the events still queued for the project (their preferences to the user's group).

    Only what was queued since this process's last look (the context's ``queue_mark``): the
    newest :data:`QUEUE_PEEK_MAX` entries the first time, then the ones after them.
    """
    recall = context.recall
    if recall is None:
        return 0
    group, newest = group_ids[0], context.queue_mark.newest
    queued = await context.queue.peek([group], QUEUE_PEEK_MAX, after=newest.get(group))
    if queued:
        newest[group] = queued[-1].entry_id
    graphiti = context.settings.graphiti
    turns = queued_turns(queued, graphiti.group_id_prefix, graphiti.resolved_user(), shared_turn)
    return await recall.add_turns(turns) if turns else 0


async def query_vector(context: PlaitContext, query: str) -> np.ndarray | None:
    """The query's vector, or None without an embedder or when it fails (words still rank)."""
    if context.embedder is None:
        return None
    vector = await attempt(context.embedder.embed_query(query))
    if isinstance(vector, PlaitError):
        logger.warning("plait: the recall embedder failed (%s); ranking by words", vector)
        return None
    return vector


async def graph_hits(
    context: PlaitContext, query: str, group_ids: Sequence[str], limit: int
) -> list[MemoryHit]:
    """Facts and entities of the knowledge graph (nothing when it is absent or down)."""
    if context.knowledge is None:
        return []
    found = await attempt(context.knowledge.search(query, group_ids, limit))
    if isinstance(found, PlaitError):
        logger.warning("plait: knowledge graph search failed: %s", found)
        return []
    return found


async def search_memory(
    context: PlaitContext,
    query: str,
    group_ids: Sequence[str],
    limit: int,
    *,
    now: datetime | None = None,
) -> list[MemoryHit]:
    """Turns of the recall index with the graph's facts after them, best first.

    ``limit`` bounds the turns (at least :data:`TURN_DEPTH` are ranked) and the graph hits
    each; the list can hold both. ``now``: when the query is asked (default the clock).
    """
    if not query.strip() or not group_ids or limit <= 0:
        return []
    turns: list[MemoryHit] = []
    if context.recall is not None:
        await index_queued(context, group_ids)
        vector = await query_vector(context, query)
        found = await context.recall.search_turns(
            query, group_ids, max(limit, TURN_DEPTH), query_vector=vector, now=now
        )
        turns = [turn_memory_hit(hit) for hit in found[:limit]]
    facts = await graph_hits(context, query, group_ids, limit)
    return place_facts(turns, facts)


async def prefetch_memory(
    context: PlaitContext, group_ids: Sequence[str], limit: int
) -> list[MemoryHit]:
    """The newest current decisions, rules and preferences of the groups, newest first."""
    if context.recall is None:
        return []
    await index_queued(context, group_ids)
    newest = await context.recall.newest_turns(group_ids, PREFETCH_KINDS, limit)
    return [turn_memory_hit(hit) for hit in newest]


__all__ = [
    "PREFETCH_KINDS",
    "TURN_DEPTH",
    "graph_hits",
    "index_queued",
    "place_facts",
    "prefetch_memory",
    "query_vector",
    "recall_groups",
    "search_memory",
    "turn_memory_hit",
]
