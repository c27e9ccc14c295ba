"""Search long-term memory: facts, entities and episodes, as plait's own frozen hits."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from graphiti_core import Graphiti
from graphiti_core.edges import EntityEdge
from graphiti_core.helpers import parse_db_date
from graphiti_core.nodes import EntityNode, EpisodicNode, Node
from graphiti_core.search.search_config import SearchResults
from graphiti_core.search.search_config_recipes import COMBINED_HYBRID_SEARCH_RRF

from plait.adapters.backends.graphiti.episodes import parse_episode_body
from plait.adapters.backends.graphiti.factory import build_indices
from plait.state.ports import MemoryHit

HIT_TEXT_MAX_CHARS = 400
# Reranked scores are scaled by kind: as relevant, a fact beats the episode it came from, and an
# episode beats an entity summary (which repeats facts without their dates).
KIND_WEIGHT = {"fact": 1.0, "preference": 1.0, "episode": 0.9, "entity": 0.8}
PREFERENCE_RELATIONS = frozenset({"PREFERS"})
# The facts each episode is a source of: an episode whose every fact was invalidated records what
# is no longer true (a reversed decision), and is as stale as its facts.
EPISODE_FACTS = """
MATCH (episode:Episodic)-[:MENTIONS]->(:Entity)-[fact:RELATES_TO]-(:Entity)
WHERE episode.uuid IN $uuids AND episode.uuid IN fact.episodes
RETURN episode.uuid AS uuid,
       collect(DISTINCT [fact.uuid, fact.invalid_at, fact.expired_at]) AS facts
"""
# The invalidated facts of each entity: graphiti-core appends an entity's facts to its summary and
# does not take them out when they are invalidated.
ENTITY_ENDED_FACTS = """
MATCH (entity:Entity)-[fact:RELATES_TO]-(:Entity)
WHERE entity.uuid IN $uuids AND (fact.invalid_at IS NOT NULL OR fact.expired_at IS NOT NULL)
RETURN entity.uuid AS uuid,
       collect(DISTINCT [fact.fact, fact.invalid_at, fact.expired_at]) AS facts
"""
KIND_LABEL = re.compile(r"^[a-z_]+: ")
# The events each episode holds (an episode groups a session's lasting events of one batch).
EPISODE_EVENTS = """
MATCH (e:Episodic) WHERE e.uuid IN $uuids
RETURN e.uuid AS uuid, e.plait_events AS events
"""
# Aging: as relevant, newer knowledge first. A dated hit's weight halves its distance to the floor
# every half-life, so a year-old fact (or an undated entity) keeps 85 % of its score.
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_FLOOR = 0.85


@dataclass(frozen=True)
class Staleness:
    """What a search found out of date: episodes whose facts all ended, entities' ended facts."""

    episodes: dict[str, datetime] = field(default_factory=dict)
    entity_facts: dict[str, frozenset[str]] = field(default_factory=dict)


def flat(text: str) -> str:
    """The text on one line, runs of whitespace made one space."""
    return " ".join(text.split())


def clip(text: str, limit: int = HIT_TEXT_MAX_CHARS) -> str:
    """One line of at most ``limit`` characters."""
    line = flat(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def episode_text(episode: EpisodicNode) -> str:
    """An episode's events as ``kind: summary`` lines joined (or its raw content)."""
    _, lines = parse_episode_body(episode.content)
    if not lines:
        return clip(episode.content)
    return clip("; ".join(f"{line.kind}: {line.summary}" for line in lines if line.summary))


def edge_kind(edge: EntityEdge) -> str:
    """``preference`` for the user's preferences, else ``fact``."""
    return "preference" if edge.name in PREFERENCE_RELATIONS else "fact"


def edge_hit(edge: EntityEdge, score: float) -> MemoryHit:
    """A fact (or a preference), with the episodes it was read from."""
    invalid_at = edge.invalid_at or edge.expired_at
    return MemoryHit(
        uuid=edge.uuid,
        kind=edge_kind(edge),
        text=clip(edge.fact),
        score=score,
        valid_at=edge.valid_at,
        invalid_at=invalid_at,
        group_id=edge.group_id,
        episodes=tuple(edge.episodes or ()),
    )


def node_hit(node: EntityNode, score: float, ended: frozenset[str] = frozenset()) -> MemoryHit:
    """An entity, with its summary when it has one, less the lines that are ``ended`` facts."""
    summary = "\n".join(
        line for line in node.summary.splitlines() if flat(line) and flat(line) not in ended
    )
    text = f"{node.name}: {summary}" if summary else node.name
    return MemoryHit(
        uuid=node.uuid, kind="entity", text=clip(text), score=score, group_id=node.group_id
    )


def episode_hit(episode: EpisodicNode, score: float) -> MemoryHit:
    """An episode."""
    return MemoryHit(
        uuid=episode.uuid,
        kind="episode",
        text=episode_text(episode),
        score=score,
        valid_at=episode.valid_at,
        group_id=episode.group_id,
    )


def scored(items: list, values: list[float]) -> list[tuple]:
    """Items with their reranker scores (zero when graphiti returned fewer scores)."""
    padded = [*values[: len(items)], *[0.0] * max(0, len(items) - len(values))]
    return list(zip(items, padded, strict=True))


def hits_of(
    results: SearchResults, *, include_invalid: bool = False, stale: Staleness | None = None
) -> list[MemoryHit]:
    """Facts, entities and episodes of a graphiti search, best first.

    What ``stale`` names (see :func:`staleness`) is left out with the invalidated facts: episodes
    whose facts all ended, and the ended facts in entity summaries. ``include_invalid`` keeps
    all of it, the episodes marked as no longer current.
    """
    stale = stale or Staleness()
    ended = {} if include_invalid else stale.entity_facts
    hits = [
        *(edge_hit(e, s) for e, s in scored(results.edges, results.edge_reranker_scores)),
        *(
            node_hit(n, s, ended.get(n.uuid, frozenset()))
            for n, s in scored(results.nodes, results.node_reranker_scores)
        ),
        *(
            episode_hit(e, s).model_copy(update={"invalid_at": stale.episodes.get(e.uuid)})
            for e, s in scored(results.episodes, results.episode_reranker_scores)
        ),
    ]
    if not include_invalid:
        hits = [hit for hit in hits if hit.is_current]
    return rank(hits)


async def staleness(graphiti: Graphiti, results: SearchResults) -> Staleness:
    """What of a search's entities and episodes invalidated facts have made out of date."""
    return Staleness(
        episodes=await superseded_episodes(graphiti, results.episodes),
        entity_facts=await ended_facts(graphiti, results.nodes),
    )


async def by_group(graphiti: Graphiti, query: str, nodes: Sequence[Node]) -> list[dict]:
    """The records of ``query`` run with each group's node uuids on that group's graph."""
    uuids: defaultdict[str, list[str]] = defaultdict(list)
    for node in nodes:
        uuids[node.group_id].append(node.uuid)
    records: list[dict] = []
    for group_id, group_uuids in uuids.items():
        driver = graphiti.driver.clone(database=group_id)
        found, _, _ = await driver.execute_query(query, uuids=group_uuids)
        records.extend(found)
    return records


def end_of(invalid_at: object, expired_at: object) -> datetime | None:
    """When a fact stopped being true, as :attr:`MemoryHit.is_current` reads it."""
    return parse_db_date(invalid_at or expired_at)  # type: ignore[arg-type]


async def superseded_episodes(
    graphiti: Graphiti, episodes: Sequence[EpisodicNode]
) -> dict[str, datetime]:
    """The episodes whose every fact was invalidated, with when the last of them ended.

    An episode with the same events as a superseded one (the prompt a decision was read from
    says the same) is superseded with it. Episodes that are the source of no fact are left
    alone: nothing says they are out of date.
    """
    ended: dict[str, datetime] = {}
    for record in await by_group(graphiti, EPISODE_FACTS, episodes):
        ends = [end_of(invalid, expired) for _, invalid, expired in record["facts"]]
        known = [end for end in ends if end is not None]
        if known and len(known) == len(ends):
            ended[record["uuid"]] = max(known)
    says = {episode.uuid: said(episode) for episode in episodes}
    stale_text = {says[uuid]: end for uuid, end in ended.items() if uuid in says}
    for uuid, text in says.items():
        if uuid not in ended and text in stale_text:
            ended[uuid] = stale_text[text]
    return ended


async def ended_facts(
    graphiti: Graphiti, entities: Sequence[EntityNode]
) -> dict[str, frozenset[str]]:
    """Each entity's facts that have stopped being true, one line each."""
    now = datetime.now(UTC)
    ended: dict[str, frozenset[str]] = {}
    for record in await by_group(graphiti, ENTITY_ENDED_FACTS, entities):
        facts = frozenset(
            flat(fact)
            for fact, invalid, expired in record["facts"]
            if fact and (end := end_of(invalid, expired)) is not None and end <= now
        )
        if facts:
            ended[record["uuid"]] = facts
    return ended


def said(episode: EpisodicNode) -> str:
    """What an episode says, without its event kinds."""
    return KIND_LABEL.sub("", episode_text(episode)).lower()


def rank(hits: list[MemoryHit]) -> list[MemoryHit]:
    """Best score first; facts before entities before episodes on ties; no repeated uuid."""
    seen: set[str] = set()
    ranked = []
    for hit in sorted(hits, key=lambda h: (-h.score, h.tie_rank, h.uuid)):
        if hit.uuid not in seen:
            seen.add(hit.uuid)
            ranked.append(hit)
    return ranked


async def reranked(graphiti: Graphiti, query: str, hits: list[MemoryHit]) -> list[MemoryHit]:
    """The hits in one order across kinds, scored by graphiti's cross-encoder.

    graphiti-core ranks facts, entities and episodes each in their own list (reciprocal rank
    fusion of full-text and vector search), so a score from one list says nothing against a
    score from another; the reranker scores every candidate against the query on one scale,
    weighted by :data:`KIND_WEIGHT` and by :func:`recency`.
    """
    if not hits:
        return hits
    ranked = await graphiti.cross_encoder.rank(query, list({hit.text: None for hit in hits}))
    score_of = dict(ranked)
    now = datetime.now(UTC)
    return rank(
        [
            hit.model_copy(update={"score": score_of.get(hit.text, 0.0) * weight(hit, now)})
            for hit in hits
        ]
    )


def weight(hit: MemoryHit, now: datetime) -> float:
    """What a hit's relevance is multiplied by: its kind's weight and its recency."""
    return KIND_WEIGHT.get(hit.kind, 0.8) * recency(hit.valid_at, now)


def recency(valid_at: datetime | None, now: datetime) -> float:
    """1 for what became true now, down toward :data:`RECENCY_FLOOR` with age.

    Undated hits (entities) count as old: age only ever lifts what is known to be recent.
    """
    if valid_at is None:
        return RECENCY_FLOOR
    if valid_at.tzinfo is None:
        valid_at = valid_at.replace(tzinfo=UTC)
    age_days = max(0.0, (now - valid_at).total_seconds() / 86_400)
    return RECENCY_FLOOR + (1 - RECENCY_FLOOR) * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


async def events_of_episodes(graphiti: Graphiti, hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """The hits with their source episodes replaced by the events those episodes hold.

    An event's uuid is its turn's id in the recall index, so a fact can be placed beside the
    turn it was read from. Episodes written before plait kept ``plait_events`` stay as they are.
    """
    wanted: defaultdict[str, set[str]] = defaultdict(set)
    for hit in hits:
        wanted[hit.group_id].update(hit.episodes)
    events: dict[str, list[str]] = {}
    for group_id, uuids in wanted.items():
        if not uuids or not group_id:
            continue
        driver = graphiti.driver.clone(database=group_id)
        records, _, _ = await driver.execute_query(EPISODE_EVENTS, uuids=sorted(uuids))
        events.update({r["uuid"]: list(r["events"] or []) for r in records})
    return [
        hit.model_copy(
            update={
                "episodes": tuple(
                    dict.fromkeys(e for uuid in hit.episodes for e in events.get(uuid) or [uuid])
                )
            }
        )
        if hit.episodes
        else hit
        for hit in hits
    ]


async def search_memory(
    graphiti: Graphiti,
    query: str,
    group_ids: Sequence[str],
    limit: int = 10,
    *,
    include_invalid: bool = False,
) -> list[MemoryHit]:
    """Hybrid search of facts and entities of the groups, reranked as one list.

    Candidates come from graphiti-core's hybrid search (full-text + vector, RRF per kind),
    up to ``limit`` of each kind; :func:`reranked` orders them together. Episodes are not
    searched here: plait's recall index ranks turns far better (FalkorDB's full-text scoring
    found 0.117 of LoCoMo's evidence in the top 10, BM25 0.496).

    Args:
        graphiti: an open ``Graphiti``.
        query: what to look for.
        group_ids: the groups to search (each is its own FalkorDB graph).
        limit: most hits returned, across kinds and groups.
        include_invalid: keep facts that a newer fact invalidated, and the episodes they came from.
    """
    if not query.strip() or not group_ids or limit <= 0:
        return []
    await build_indices(graphiti, group_ids)
    config = COMBINED_HYBRID_SEARCH_RRF.model_copy(deep=True)
    config.limit = limit
    config.episode_config = None
    config.community_config = None
    results = await graphiti.search_(query, config=config, group_ids=list(group_ids))
    hits = hits_of(
        results, include_invalid=include_invalid, stale=await staleness(graphiti, results)
    )
    return await events_of_episodes(graphiti, (await reranked(graphiti, query, hits))[:limit])


__all__ = [
    "hits_of",
    "rank",
    "reranked",
    "Staleness",
    "search_memory",
    "staleness",
]
