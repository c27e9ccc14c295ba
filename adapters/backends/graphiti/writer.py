"""Write session events into Graphiti as episodes, exactly once per event.

graphiti-core's ``add_episode(uuid=...)`` loads an *existing* episode by that uuid, and
``add_episode_bulk`` has no idempotency at all, so plait makes replays safe itself: every
event has a deterministic uuid (:func:`plait.state.ports.episode_uuid`); an episode is saved
first under its first event's uuid, processed by ``add_episode``, then marked done with the
uuids of every event it holds (``plait_events``). Events already in a done episode are
skipped. An episode whose processing fails is removed again; one a crash left unmarked is
removed by the next try of any of its events (which may hold them in another episode: alone,
after a batch failed), so no half-written episode stays in the graph.

:func:`write_events` is the knowledge-graph port's path: the events it is given (the drain's
episode: one root session's lasting events of one batch) become one episode, since an LLM
extractor is paid per episode; its reference time is the newest event's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from graphiti_core import Graphiti
from graphiti_core.edges import EntityEdge
from graphiti_core.errors import NodeNotFoundError
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode
from graphiti_core.search.search_utils import get_mentioned_nodes
from graphiti_core.utils.datetime_utils import utc_now
from pydantic import BaseModel

from plait.adapters.backends.graphiti.episodes import episode_body_for
from plait.adapters.backends.graphiti.extraction import ENTITY_TYPES
from plait.adapters.backends.graphiti.factory import build_indices
from plait.state.base.redact import redact
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import episode_uuid

SOURCE_DESCRIPTION = "plait session events"
PREVIOUS_EPISODES = 3
NAME_MAX_CHARS = 120

DONE_EVENTS_QUERY = """
MATCH (e:Episodic) WHERE e.plait_done = true AND any(id IN e.plait_events WHERE id IN $ids)
UNWIND e.plait_events AS id
WITH id WHERE id IN $ids
RETURN DISTINCT id
"""
UNFINISHED_QUERY = """
MATCH (e:Episodic) WHERE e.uuid IN $uuids AND coalesce(e.plait_done, false) = false
DETACH DELETE e
"""
MARK_QUERY = """
MATCH (e:Episodic {uuid: $uuid})
SET e.plait_done = true, e.plait_events = $ids
"""


def entity_models() -> dict[str, type[BaseModel]]:
    """Plait's entity types as the field-less pydantic models graphiti-core classifies into."""
    return {
        name: type(name, (BaseModel,), {"__doc__": description})
        for name, description in ENTITY_TYPES.items()
    }


ENTITY_MODELS = entity_models()


def episode_name(events: Sequence[SessionEvent]) -> str:
    """A short, readable episode name: session and event range."""
    first, last = events[0], events[-1]
    span = f"{first.id}" if first.id == last.id else f"{first.id}-{last.id}"
    return f"{first.root_session_id} events {span}"[:NAME_MAX_CHARS]


def split_preferences(
    events: Sequence[SessionEvent],
) -> tuple[list[SessionEvent], list[SessionEvent]]:
    """(everything but preferences, preferences)."""
    rest = [e for e in events if e.kind is not EventKind.PREFERENCE]
    preferences = [e for e in events if e.kind is EventKind.PREFERENCE]
    return rest, preferences


async def save_and_process(
    graphiti: Graphiti,
    driver: Any,
    group_id: str,
    fresh: Sequence[tuple[str, SessionEvent]],
    project: str,
) -> None:
    """Save the episode of ``fresh`` (keyed events), run graphiti on it, mark it done."""
    new_events = [event for _, event in fresh]
    uuid = fresh[0][0]
    reference_time = max(event.time for event in new_events).astimezone(UTC)
    body = redact(episode_body_for(new_events, project))
    previous = await graphiti.retrieve_episodes(
        reference_time, last_n=PREVIOUS_EPISODES, group_ids=[group_id], driver=driver
    )
    name = redact(episode_name(new_events))
    await driver.execute_query(UNFINISHED_QUERY, uuids=[key for key, _ in fresh])
    await EpisodicNode(
        uuid=uuid,
        name=name,
        group_id=group_id,
        labels=[],
        source=EpisodeType.text,
        content=body,
        source_description=SOURCE_DESCRIPTION,
        created_at=utc_now(),
        valid_at=reference_time,
    ).save(driver)
    try:
        await graphiti.add_episode(
            name=name,
            episode_body=body,
            source_description=SOURCE_DESCRIPTION,
            reference_time=reference_time,
            source=EpisodeType.text,
            group_id=group_id,
            uuid=uuid,
            entity_types=ENTITY_MODELS,
            previous_episode_uuids=[p.uuid for p in previous if p.uuid != uuid],
        )
    except Exception:
        await driver.execute_query(UNFINISHED_QUERY, uuids=[uuid])
        raise
    await driver.execute_query(MARK_QUERY, uuid=uuid, ids=[key for key, _ in fresh])


async def done_event_uuids(driver: Any, ids: list[str]) -> set[str]:
    """Which of the events (by episode uuid) are in a finished episode of this group."""
    if not ids:
        return set()
    records, _, _ = await driver.execute_query(DONE_EVENTS_QUERY, ids=ids)
    return {record["id"] for record in records}


async def write_events(
    graphiti: Graphiti, group_id: str, events: Sequence[SessionEvent], project: str = ""
) -> int:
    """Write the events not written before as one episode; return how many were new.

    The episode's uuid is :func:`~plait.state.ports.episode_uuid` of its first new event,
    its reference time the newest event's; events in time order.
    """
    if not events:
        return 0
    await build_indices(graphiti, [group_id])
    driver = graphiti.driver.clone(database=group_id)
    keyed = {episode_uuid(group_id, event): event for event in events}
    done = await done_event_uuids(driver, list(keyed))
    fresh = sorted(
        ((key, event) for key, event in keyed.items() if key not in done),
        key=lambda pair: pair[1].time,
    )
    if fresh:
        await save_and_process(graphiti, driver, group_id, fresh, project)
    return len(fresh)


async def remove_episode(graphiti: Graphiti, episode_uuid: str) -> int:
    """Remove one episode, the facts it created and the entities only it mentions; 0 or 1.

    graphiti-core's ``remove_episode`` does that (0: the graph does not hold it). An entity other
    episodes mention stays, but its summary no longer repeats the removed facts: a forgotten
    memory must not live on in a neighbour's summary.
    """
    driver = graphiti.driver
    try:
        episode = await EpisodicNode.get_by_uuid(driver, episode_uuid)
    except NodeNotFoundError:
        return 0
    edges = await EntityEdge.get_by_uuids(driver, episode.entity_edges)
    facts = [edge.fact for edge in edges if edge.episodes and edge.episodes[0] == episode.uuid]
    mentioned = await get_mentioned_nodes(driver, [episode])
    await graphiti.remove_episode(episode_uuid)
    for node in mentioned:
        try:
            kept = await EntityNode.get_by_uuid(driver, node.uuid)
        except NodeNotFoundError:
            continue
        summary = kept.summary
        for fact in facts:
            summary = summary.replace(fact, " ")
        summary = " ".join(summary.split())
        if summary != kept.summary:
            kept.summary = summary
            await kept.save(driver)
    return 1


__all__ = [
    "ENTITY_MODELS",
    "done_event_uuids",
    "episode_name",
    "split_preferences",
    "remove_episode",
    "write_events",
]
