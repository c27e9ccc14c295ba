"""Nodes of the drain graph: claim → redact → refine → index → build episodes → write → ack.

Refining gives the statements the capture rules passed over a second look
(:mod:`plait.nodes.statement_kinds`): a decision, preference or standing rule of a user's
prompt, or a decision of the model's reply, said in fresh words is recorded, and the next hook
folds it into the envelope.

Every claimed event but raw tool output goes into the recall index at once, the assistant's
replies included (a local write, milliseconds); only lasting knowledge
(:func:`plait.nodes.lasting.is_lasting`) goes on to the knowledge graph, grouped: one episode
per root session and batch, which is what an LLM extractor is paid per.
"""

from __future__ import annotations

import random
from itertools import groupby
from typing import Any, Literal

from langgraph.runtime import Runtime

from plait.nodes.capture import Source, statement_event
from plait.nodes.lasting import is_lasting
from plait.nodes.statement_kinds import StatementKinds, shipped, undecided_of
from plait.nodes.statements import Statement, StatementKind, shared_turn
from plait.nodes.supersession import (
    LOOKBACK_EVENTS,
    correction,
    is_correction,
    open_pairs,
    pair_texts,
    replacements,
    vector_pair_model,
)
from plait.state.background import DrainState
from plait.state.base.boundary import attempt, describe, fail_open
from plait.state.base.errors import BackendUnavailable, PlaitError
from plait.state.context import PlaitContext
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import KnowledgeGraph, QueueEntry
from plait.state.recall import KEYED_KINDS, TextEmbedder, queued_turns

BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 30.0
# Strikes: the graph's server, which is the hot tier's, went down while a write holding the
# entry was under way. After one, the batch's events are written one at a time; an event being
# written when it went down this often (its batch's once, then twice alone) is set aside as a
# dead letter without being written again, so it cannot take the hot tier down at every run.
STRIKES_TO_SET_ASIDE = 3


def without_repeated_events(batch: list[QueueEntry]) -> list[QueueEntry]:
    """The batch with a repeat (same group, session, kind and wording) dropped: it merges."""
    seen: set[tuple[str, str, str, str]] = set()
    kept = []
    for claimed in batch:
        event = claimed.event
        slot = (claimed.group_id, event.root_session_id, event.kind.value, event.summary.lower())
        if slot not in seen:
            seen.add(slot)
            kept.append(claimed)
    return kept


def backoff_seconds(attempt: int, *, jitter: float | None = None) -> float:
    """Exponential backoff with full jitter: a random wait in [0, min(cap, base * 2**attempt)]."""
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
    return ceiling * (random.random() if jitter is None else jitter)


def without_superseded(batch: list[QueueEntry]) -> list[QueueEntry]:
    """The batch less each decision, rule or preference a later one with its key reverses.

    The recall index keeps both (the older marked replaced); the graph gets what holds now,
    in one episode, instead of a fact it would have to invalidate from the next one.
    """
    last: dict[tuple[str, str], int] = {}
    for position, claimed in enumerate(batch):
        event = claimed.event
        if event.kind in KEYED_KINDS and event.key:
            last[(claimed.group_id, event.key)] = position
    return [
        claimed
        for position, claimed in enumerate(batch)
        if claimed.event.kind not in KEYED_KINDS
        or not claimed.event.key
        or last[(claimed.group_id, claimed.event.key)] == position
    ]


def chunk_episodes(
    batch: list[QueueEntry], *, max_events: int, max_bytes: int
) -> list[list[QueueEntry]]:
    """Split a batch into episodes: one group and root session each, in order, within limits."""
    chunks: list[list[QueueEntry]] = []
    for _, run in groupby(batch, key=lambda c: (c.group_id, c.event.root_session_id)):
        current: list[QueueEntry] = []
        size = 0
        for claimed in run:
            weight = len(claimed.event.model_dump_json().encode())
            if current and (len(current) >= max_events or size + weight > max_bytes):
                chunks.append(current)
                current, size = [], 0
            current.append(claimed)
            size += weight
        if current:
            chunks.append(current)
    return chunks


async def claim_batch(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Claim up to ``batch_size`` entries: own unacked, then stale ones of dead workers, then new.

    An entry is stale once idle for ``redis.claim_idle_ms`` (another worker's unacked batch).
    """
    settings = runtime.context.settings.redis
    batch = await runtime.context.queue.claim(
        state["consumer"], count=settings.batch_size, min_idle_ms=settings.claim_idle_ms
    )
    return {
        "batch": batch,
        "personal": {},
        "claimed": len(batch),
        "attempt": 0,
        "error": None,
        "unreachable": False,
    }


async def redact_batch(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Redact again before anything leaves the process.

    An event is redacted when built and when read back (:class:`SessionEvent`); rebuilding it
    here applies the rules in force now to every text field, whatever wrote it.
    """
    redacted = [
        claimed.model_copy(update={"event": SessionEvent.model_validate(dict(claimed.event))})
        for claimed in state.get("batch", [])
    ]
    return {"batch": redacted}


async def refine_captures(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Look again at the batch: choices in fresh words, and decisions that replace held ones.

    The classifier records the choices it finds in the batch's prompts and the model's replies
    (:func:`refine_statements`); the vector pair model, the held decisions the batch's replace
    in words no rule knows (:func:`supersede_later`).

    Only with the embedder the shipped models were trained on; each fails open like indexing.
    """
    context = runtime.context
    embedder = context.embedder
    if embedder is None:
        return {}
    events = [claimed.event for claimed in state.get("batch", [])]
    personal = await refine_statements(context, embedder, events)
    await fail_open("looking again at decisions", supersede_later(context, embedder, events), 0)
    return {"personal": personal} if personal else {}


async def refine_statements(
    context: PlaitContext, embedder: TextEmbedder, events: list[SessionEvent]
) -> dict[str, list[str]]:
    """The classifier's look at each event's undecided statements, embedded at once.

    Each prompt's findings are appended once (the prompt's id is their call id).
    """
    kinds = shipped()
    if kinds is None or embedder.name != kinds.model:
        return {}
    read = [(event, candidates) for event in events if (candidates := undecided_of(event))]
    if not read:
        return {}
    return await fail_open("refining captures", refine(context, embedder, kinds, read), {})


async def supersede_later(
    context: PlaitContext, embedder: TextEmbedder, events: list[SessionEvent]
) -> int:
    """Append a correction for each of the batch's decisions that replaces held ones.

    For each decision, the held ones the fold kept beside it with no evidence either way
    (:func:`~plait.nodes.supersession.left_to_vectors`) are weighed by the vector pair model,
    from the session's log; a correction is appended once per decision (its call id). Returns
    how many were appended.
    """
    model = vector_pair_model()
    decisions = [e for e in events if e.kind is EventKind.DECISION and not is_correction(e)]
    if model is None or embedder.name != model.model or not decisions:
        return 0
    appended = 0
    by_session = sorted(decisions, key=lambda e: (e.root_session_id, e.id))
    for root, group in groupby(by_session, key=lambda e: e.root_session_id):
        mine = list(group)
        after = max(0, mine[0].id - LOOKBACK_EVENTS)
        log = await context.events.read_events(root, after_id=after, limit=mine[-1].id - after)
        pairs = open_pairs(log, mine)
        if not pairs:
            continue
        texts = sorted({t for new, held in pairs for t in pair_texts(new, held)})
        vectors = dict(zip(texts, await embedder.embed_passages(texts), strict=True))
        for new, replaced in replacements(model, pairs, vectors):
            stored = await context.events.append_events(
                root, [correction(new, replaced)], call_id=f"superseded:{new.id}"
            )
            appended += len(stored)
    return appended


async def refine(
    context: PlaitContext,
    embedder: TextEmbedder,
    kinds: StatementKinds,
    read: list[tuple[SessionEvent, list[Statement]]],
) -> dict[str, list[str]]:
    """Append what the classifier is sure of among each prompt's (or reply's) candidates.

    Returns the preferences found, by prompt (:func:`prompt_slot`): the recall index keeps a
    team member's prompt without them, as it does without the rules' (:func:`index_turns`).
    """
    vectors = await embedder.embed_passages([s.text for _, found in read for s in found])
    start, personal = 0, {}
    for prompt, candidates in read:
        found = kinds.promoted(candidates, vectors[start : start + len(candidates)])
        start += len(candidates)
        if found:
            await context.events.append_events(
                prompt.root_session_id,
                [refined_event(prompt, statement) for statement in found],
                enqueue_group=context.group_id,
                call_id=f"refined:{prompt.id}",
            )
        preferences = [s.text for s in found if s.kind is StatementKind.PREFERENCE]
        if preferences:
            personal[prompt_slot(prompt)] = preferences
    return personal


def prompt_slot(prompt: SessionEvent) -> str:
    """A prompt's place in its root session's log, as the drain's state names it."""
    return f"{prompt.root_session_id}:{prompt.id}"


def refined_event(prompt: SessionEvent, statement: Statement) -> SessionEvent:
    """A statement the classifier found, as an event of the prompt's session and time."""
    source = Source(session_id=prompt.session_id, host=prompt.source_hook.split(".")[0])
    same = {"root_session_id": prompt.root_session_id, "member": prompt.member, "time": prompt.time}
    return statement_event(source, statement, "refined").model_copy(update=same)


async def index_turns(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Add the batch to the recall index before the slow graph write (fails open: logged)."""
    context = runtime.context
    if context.recall is None:
        return {}
    graphiti = context.settings.graphiti
    batch, owner = state.get("batch", []), graphiti.resolved_user()
    personal = state.get("personal", {})

    def shared(event: SessionEvent) -> SessionEvent | None:
        return shared_turn(event, personal.get(prompt_slot(event), ()))

    turns = queued_turns(batch, graphiti.group_id_prefix, owner, shared)
    if turns:
        await fail_open("recall indexing", context.recall.add_turns(turns), 0)
    return {}


async def build_episodes(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Keep lasting knowledge once and current, then one episode per group and session."""
    settings = runtime.context.settings.redis
    lasting = [c for c in state.get("batch", []) if is_lasting(c.event)]
    kept = without_superseded(without_repeated_events(lasting))
    episodes = chunk_episodes(
        kept, max_events=settings.batch_size, max_bytes=settings.batch_max_bytes
    )
    return {"episodes": episodes}


async def write_episodes(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Write every episode; episode uuids derive from event ids, so a retry never duplicates.

    A batch one of whose events was being written when the graph's server went down
    (:func:`strike_if_the_server_died`) is written one event at a time (:func:`isolate_failures`).
    """
    context = runtime.context
    knowledge = context.knowledge
    if knowledge is None:
        return {"error": "no knowledge graph configured", "attempt": state.get("attempt", 0) + 1}
    episodes = state.get("episodes", [])
    entries = [claimed for episode in episodes for claimed in episode]
    if any(context.graph_strikes[claimed.entry_id] for claimed in entries):
        dead, alone, stopped = await isolate_failures(state.get("batch", []), knowledge, context)
        moved = {
            "written": state.get("written", 0) + alone,
            "dead_lettered": state.get("dead_lettered", 0) + dead,
        }
        if stopped:
            return {**moved, "error": "graph server unreachable", "unreachable": True}
        return {**moved, "error": None}
    written = await attempt(write_all(knowledge, episodes))
    if isinstance(written, BackendUnavailable):
        await strike_if_the_server_died(context, entries)
        return {"error": f"graph server unreachable: {written}", "unreachable": True}
    if isinstance(written, PlaitError):
        return {"error": describe(written)[:2000], "attempt": state.get("attempt", 0) + 1}
    for claimed in entries:
        context.graph_strikes.pop(claimed.entry_id, None)
    return {"error": None, "written": state.get("written", 0) + written}


async def strike_if_the_server_died(context: PlaitContext, entries: list[QueueEntry]) -> None:
    """A strike on each entry when the write took the graph's server, the hot tier's, down.

    The hot tier answered the batch's claim; if it does not answer now, the server died while
    the write was under way. A graph with a server of its own counts none: its outage says
    nothing of the write.
    """
    if context.settings.falkordb.url is not None:
        return
    if isinstance(await attempt(context.queue.queue_depth()), PlaitError):
        context.graph_strikes.update(claimed.entry_id for claimed in entries)


async def write_all(knowledge: KnowledgeGraph, episodes: list[list[QueueEntry]]) -> int:
    """Write the episodes in order; how many events were new."""
    written = 0
    for episode in episodes:
        events = [claimed.event for claimed in episode]
        written += await knowledge.write_episodes(episode[0].group_id, events)
    return written


async def wait_backoff(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Sleep with exponential backoff and jitter before the next try."""
    await runtime.context.sleep(backoff_seconds(state.get("attempt", 1)))
    return {}


async def ack_batch(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Acknowledge the whole batch (chatter included: it is done with)."""
    await runtime.context.queue.ack(state.get("batch", []))
    return {"batch": [], "episodes": []}


async def dead_letter_batch(state: DrainState, runtime: Runtime[PlaitContext]) -> dict[str, Any]:
    """Give up on the batch as a whole, not on its events: one bad event spoils no other.

    Each event is written alone: those that go through are acked, only those that still fail
    are dead-lettered, each with its own reason. Without a knowledge graph, or for a batch of
    one, the whole batch goes to the dead letters with the batch's reason. If the graph server
    becomes unreachable meanwhile, what is left stays queued.
    """
    batch = state.get("batch", [])
    knowledge = runtime.context.knowledge
    if knowledge is None or len(batch) == 1:
        reason = state.get("error") or "the write failed without a reason"
        for claimed in batch:
            await runtime.context.dead_letters.dead_letter(claimed, reason)
        dead, written = len(batch), 0
    else:
        dead, written, _ = await isolate_failures(batch, knowledge, runtime.context)
    return {
        "batch": [],
        "episodes": [],
        "written": state.get("written", 0) + written,
        "dead_lettered": state.get("dead_lettered", 0) + dead,
    }


async def isolate_failures(
    batch: list[QueueEntry], knowledge: KnowledgeGraph, context: PlaitContext
) -> tuple[int, int, bool]:
    """Write each event of ``batch`` alone; ack it, or dead-letter it with why.

    Returns (dead, written, stopped): ``stopped`` when the graph server became unreachable,
    leaving the rest pending. An event that was being written every time the server went down
    (:data:`STRIKES_TO_SET_ASIDE`) is dead-lettered without being written again.
    """
    dead = written = 0
    strikes = context.graph_strikes
    for claimed in batch:
        if not is_lasting(claimed.event):  # kept out of the graph (it is in the recall index)
            await context.queue.ack([claimed])
            continue
        if strikes[claimed.entry_id] >= STRIKES_TO_SET_ASIDE:
            reason = set_aside_reason(strikes.pop(claimed.entry_id))
            await context.dead_letters.dead_letter(claimed, reason)
            dead += 1
            continue
        result = await attempt(knowledge.write_episodes(claimed.group_id, [claimed.event]))
        if isinstance(result, BackendUnavailable):
            await strike_if_the_server_died(context, [claimed])
            return dead, written, True  # the rest stays pending: claimed again on the next run
        if isinstance(result, PlaitError):
            await context.dead_letters.dead_letter(claimed, describe(result)[:2000])
            dead += 1
            continue
        await context.queue.ack([claimed])
        strikes.pop(claimed.entry_id, None)
        written += result
    return dead, written, False


def set_aside_reason(strikes: int) -> str:
    """Why an event that took the graph's server down ``strikes`` times is not written again."""
    return (
        f"the graph server went down {strikes} times while this event was "
        "being written (the last ones with it alone); it is not written again, so it cannot take "
        "the hot tier down at every drain: replay it (plait dlq replay) once the server is fixed"
    )


def route_after_build_episodes(
    state: DrainState,
) -> Literal["write_episodes", "ack_batch"]:
    """Nothing worth the graph in the batch: ack it at once (it is in the recall index)."""
    return "write_episodes" if state.get("episodes") else "ack_batch"


def route_after_claim_batch(state: DrainState) -> Literal["redact_batch", "__end__"]:
    """Nothing claimed, nothing to do."""
    return "redact_batch" if state.get("batch") else "__end__"


def route_after_write_episodes(
    state: DrainState, runtime: Runtime[PlaitContext]
) -> Literal["ack_batch", "wait_backoff", "dead_letter_batch", "__end__"]:
    """Ack, retry, dead-letter, or leave the batch queued.

    Ack on success; retry with backoff; dead-letter after ``drain_retry_max`` tries; leave
    the batch pending (claimed again on the next run) when the graph server is unreachable.
    """
    if state.get("error") is None:
        return "ack_batch"
    if state.get("unreachable"):
        return "__end__"
    if state.get("attempt", 0) >= runtime.context.settings.redis.drain_retry_max:
        return "dead_letter_batch"
    return "wait_backoff"


__all__ = [
    "ack_batch",
    "backoff_seconds",
    "build_episodes",
    "chunk_episodes",
    "claim_batch",
    "dead_letter_batch",
    "index_turns",
    "isolate_failures",
    "redact_batch",
    "route_after_build_episodes",
    "route_after_claim_batch",
    "route_after_write_episodes",
    "wait_backoff",
    "without_repeated_events",
    "without_superseded",
    "write_episodes",
]
