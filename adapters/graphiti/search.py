"""Search long-term memory: facts, entities and episodes, as plait's own frozen hits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from graphiti_core import Graphiti
from graphiti_core.edges import EntityEdge
from graphiti_core.nodes import EntityNode, EpisodicNode
from graphiti_core.search.search_config import SearchResults
from graphiti_core.search.search_config_recipes import COMBINED_HYBRID_SEARCH_RRF

from plait.adapters.graphiti.episodes import parse_episode_body
from plait.adapters.graphiti.factory import build_indices
from plait.nodes.ports import MemoryHit as PortHit
from plait.nodes.recall import KIND_ORDER

HIT_TEXT_MAX_CHARS = 400
# Reranked scores are scaled by kind: as relevant, a fact beats the episode it came from, and an
# episode beats an entity summary (which repeats facts without their validity).
KIND_WEIGHT = {"fact": 1.0, "preference": 1.0, "episode": 0.9, "entity": 0.8}
PREFERENCE_RELATIONS = frozenset({"PREFERS"})


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryHit(PortHit):
    """A search hit with its validity window (facts) and group."""

    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    group_id: str = ""

    @property
    def is_current(self) -> bool:
        """Not invalidated (an ``invalid_at`` in the future still counts as current)."""
        return self.invalid_at is None or self.invalid_at > datetime.now(UTC)


def clip(text: str, limit: int = HIT_TEXT_MAX_CHARS) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


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
    """A fact (or a preference)."""
    invalid_at = edge.invalid_at or edge.expired_at
    return MemoryHit(
        uuid=edge.uuid,
        kind=edge_kind(edge),
        text=clip(edge.fact),
        score=score,
        valid_at=edge.valid_at,
        invalid_at=invalid_at,
        group_id=edge.group_id,
    )


def node_hit(node: EntityNode, score: float) -> MemoryHit:
    """An entity, with its summary when it has one."""
    text = f"{node.name}: {node.summary}" if node.summary else node.name
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


def hits_of(results: SearchResults, *, include_invalid: bool = False) -> list[MemoryHit]:
    """Facts, entities and episodes of a graphiti search, best first."""
    hits = [
        *(edge_hit(e, s) for e, s in scored(results.edges, results.edge_reranker_scores)),
        *(node_hit(n, s) for n, s in scored(results.nodes, results.node_reranker_scores)),
        *(episode_hit(e, s) for e, s in scored(results.episodes, results.episode_reranker_scores)),
    ]
    if not include_invalid:
        hits = [hit for hit in hits if hit.is_current]
    return rank(hits)


def rank(hits: list[MemoryHit]) -> list[MemoryHit]:
    """Best score first; facts before entities before episodes on ties; no repeated uuid."""
    seen: set[str] = set()
    ranked = []
    for hit in sorted(hits, key=lambda h: (-h.score, KIND_ORDER.get(h.kind, 3), h.uuid)):
        if hit.uuid not in seen:
            seen.add(hit.uuid)
            ranked.append(hit)
    return ranked


async def reranked(graphiti: Graphiti, query: str, hits: list[MemoryHit]) -> list[MemoryHit]:
    """The hits in one order across kinds, scored by graphiti's cross-encoder.

    graphiti-core ranks facts, entities and episodes each in their own list (reciprocal rank
    fusion of full-text and vector search), so a score from one list says nothing against a
    score from another; the reranker scores every candidate against the query on one scale,
    weighted by :data:`KIND_WEIGHT`.
    """
    if not hits:
        return hits
    ranked = await graphiti.cross_encoder.rank(query, list({hit.text: None for hit in hits}))
    score_of = dict(ranked)
    return rank(
        [
            replace(hit, score=score_of.get(hit.text, 0.0) * KIND_WEIGHT.get(hit.kind, 0.8))  # type: ignore[call-arg]  # mypy misses a slotted parent's fields
            for hit in hits
        ]
    )


async def search_memory(
    graphiti: Graphiti,
    query: str,
    group_ids: Sequence[str],
    limit: int = 10,
    *,
    include_invalid: bool = False,
) -> list[MemoryHit]:
    """Hybrid search of facts, entities and episodes of the groups, reranked as one list.

    Candidates come from graphiti-core's hybrid search (full-text + vector, RRF per kind),
    up to ``limit`` of each kind; :func:`reranked` orders them together.

    Args:
        graphiti: an open ``Graphiti``.
        query: what to look for.
        group_ids: the groups to search (each is its own FalkorDB graph).
        limit: most hits returned, across kinds and groups.
        include_invalid: keep facts that a newer fact invalidated.
    """
    if not query.strip() or not group_ids or limit <= 0:
        return []
    await build_indices(graphiti, group_ids)
    config = COMBINED_HYBRID_SEARCH_RRF.model_copy(deep=True)
    config.limit = limit
    results = await graphiti.search_(query, config=config, group_ids=list(group_ids))
    hits = hits_of(results, include_invalid=include_invalid)
    return (await reranked(graphiti, query, hits))[:limit]


__all__ = [
    "MemoryHit",
    "hits_of",
    "rank",
    "reranked",
    "search_memory",
]
