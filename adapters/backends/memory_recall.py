"""The recall index in memory: the reference implementation and the degraded-mode fallback.

The SQLite index (:mod:`plait.adapters.backends.recall_index`) is this one plus a file: it
loads a group's rows into the same structures on first use and writes every change through.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import numpy as np

from plait.state.events import EventKind
from plait.state.ranking import QueryVector, TurnIndex, embedded_views, rank_turns
from plait.state.recall import (
    CODE_WORK_KINDS,
    KEYED_KINDS,
    SOURCE_KINDS,
    EmbeddingJob,
    FirstStageEmbedder,
    IndexedTurn,
    IndexStats,
    TurnHit,
    read_from,
)

KEYED = frozenset(kind.value for kind in KEYED_KINDS)
# how many of a session's last prompts and replies a fact may be read from: a prompt and the
# reply to it
SOURCES_READ = 2


def text_digest(text: str) -> str:
    """A short, stable fingerprint of a text (which text a vector was computed from)."""
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


class InMemoryRecallIndex:
    """Turns per group in :class:`~plait.state.ranking.TurnIndex` structures, nothing on disk.

    ``vector_model`` names the embedder whose vectors the index keeps (None: words only).
    ``first_stage`` (with a vector model) embeds each turn as it is added, and each query
    searched with vectors, so a turn has a vector before the background's embedder reaches it.
    """

    def __init__(
        self, *, vector_model: str | None = None, first_stage: FirstStageEmbedder | None = None
    ) -> None:
        """An empty index."""
        self.vector_model = vector_model
        self.first_stage = first_stage if vector_model is not None else None
        self._groups: dict[str, TurnIndex] = {}
        self._turns: dict[str, IndexedTurn] = {}
        self._replaced: dict[str, datetime] = {}
        self._newest_by_key: dict[tuple[str, str], str] = {}
        self._embedded: dict[tuple[str, str], str] = {}
        self._pending: dict[tuple[str, str], None] = {}
        # facts as keys: the turn each fact was read from, and per (group, session) the last
        # turns a fact can be read from, newest first (a prompt and the reply to it: capture's
        # facts of both may come after the reply)
        self._said_in: dict[str, str] = {}
        self._last_sources: dict[tuple[str, str], tuple[str, ...]] = {}
        # and per (group, session, time) the turns a fact can be read from said then: a fact
        # the drain's second look records later keeps its turn's time, not its place
        self._sources_at: dict[tuple[str, str, datetime], tuple[str, ...]] = {}

    # -- the port -------------------------------------------------------------------------------
    async def add_turns(self, turns: Sequence[IndexedTurn]) -> int:
        """Index turns (idempotent by id); return how many were new."""
        return self.add_now(turns)

    async def search_turns(
        self,
        query: str,
        group_ids: Sequence[str],
        limit: int,
        *,
        query_vector: QueryVector = None,
        now: datetime | None = None,
    ) -> list[TurnHit]:
        """The turns of the groups best matching ``query``, best first, at most ``limit``."""
        return self.search_now(query, group_ids, limit, query_vector=query_vector, now=now)

    async def newest_turns(
        self, group_ids: Sequence[str], kinds: Sequence[str], limit: int
    ) -> list[TurnHit]:
        """The newest current turns of the given kinds, newest first."""
        return self.newest_now(group_ids, kinds, limit)

    async def pending_embeddings(self, limit: int) -> list[EmbeddingJob]:
        """Views whose vector is missing or stale, oldest first."""
        return self.pending_now(limit)

    async def store_vectors(self, jobs: Sequence[EmbeddingJob], vectors: np.ndarray) -> int:
        """Keep the vectors whose text is still the view's text; how many."""
        return self.store_now(jobs, vectors)

    async def forget_turns(self, turn_ids: Sequence[str]) -> int:
        """Remove turns; how many were there."""
        return self.forget_now(turn_ids)

    async def stats(self) -> IndexStats:
        """How much the index holds."""
        return self.stats_now()

    async def aclose(self) -> None:
        """Nothing to release."""

    # -- the work, synchronous (the SQLite index runs it in a worker thread) ---------------------
    def group(self, group_id: str) -> TurnIndex:
        """A group's turn index (created empty)."""
        index = self._groups.get(group_id)
        if index is None:
            index = self._groups[group_id] = TurnIndex(vector_model=self.vector_model)
        return index

    def add_now(self, turns: Sequence[IndexedTurn]) -> int:
        """Index the turns not indexed yet, with their first-stage vectors; how many."""
        fresh = self.fresh(turns)
        for turn in fresh:
            self.place(turn)
        self.embed_first_stage(fresh)
        return len(fresh)

    def embed_first_stage(self, turns: Sequence[IndexedTurn]) -> np.ndarray | None:
        """Give placed turns their first-stage vectors (one row per turn; None: no first stage)."""
        if self.first_stage is None or not turns:
            return None
        vectors = self.first_stage.embed([turn.text for turn in turns])
        for turn, vector in zip(turns, vectors, strict=True):
            self.keep_first_stage_vector(turn.id, vector)
        return vectors

    def keep_first_stage_vector(self, turn_id: str, vector: np.ndarray) -> None:
        """Put a turn's first-stage vector in place."""
        index = self._groups[self._turns[turn_id].group_id]
        position = index.position(turn_id)
        if position is not None:
            index.set_first_stage_vector(position, np.asarray(vector, dtype=np.float32))

    def fresh(self, turns: Sequence[IndexedTurn]) -> list[IndexedTurn]:
        """The turns not indexed yet, once each, in session order."""
        new = [turn for turn in dict((t.id, t) for t in turns).values() if not self.has(turn)]
        return sorted(new, key=lambda t: (t.session, t.seq))

    def has(self, turn: IndexedTurn) -> bool:
        """Whether a turn is indexed already."""
        return turn.id in self._turns

    def place(self, turn: IndexedTurn, *, embed: bool = True) -> None:
        """Add one turn to its group's index, supersede by key, queue its text for a vector.

        Each turn's text is embedded once (a long one passage by passage): a neighbour that
        arrives later changes no vector; ``embed=False`` leaves that to whoever added the turn.
        A fact read from a prompt or reply of its session (:func:`~plait.state.recall.read_from`)
        is a key of that turn: a hit on it names the turn (``said_in``), and it is no turn's
        neighbour (the turns around it stay each other's), though it shares its session's score.
        The turn is looked for among those said at the fact's time (the drain's second look
        records a fact after later turns, dated when its turn was said), then among the
        session's last :data:`SOURCES_READ` prompts and replies, facts placed since aside
        (capture's facts follow their turn, dated when they were read).
        """
        index = self.group(turn.group_id)
        slot = (turn.group_id, turn.session)
        at = (*slot, turn.said_at)
        named = dict.fromkeys((*self._sources_at.get(at, ()), *self._last_sources.get(slot, ())))
        sources = (self._turns.get(turn_id) for turn_id in named)
        source = next((s for s in sources if s is not None and read_from(turn, s)), None)
        if source is not None:
            self._said_in[turn.id] = source.id
        in_conversation = turn.id not in self._said_in
        # a fact after it may be read from this prompt or reply (not from a finding kept as a key)
        if turn.kind in SOURCE_KINDS and in_conversation:
            kept = self._last_sources.get(slot, ())
            self._last_sources[slot] = (turn.id, *kept)[:SOURCES_READ]
            self._sources_at[at] = (turn.id, *self._sources_at.get(at, ()))
        index.add(
            turn.id,
            turn.session,
            turn.text,
            turn.said_at,
            in_conversation=in_conversation,
            prompt=turn.kind == EventKind.PROMPT.value,
            code_work=turn.kind in CODE_WORK_KINDS,
            said=turn.kind in SOURCE_KINDS,
        )
        self._turns[turn.id] = turn
        self.supersede(turn)
        if self.vector_model is not None and embed:
            views = embedded_views(turn.text)
            self._pending.update(dict.fromkeys((turn.id, view) for view in views))

    def supersede(self, turn: IndexedTurn) -> None:
        """A newer decision, rule or preference with the same key replaces the older one."""
        if turn.kind not in KEYED or not turn.key:
            return
        slot = (turn.group_id, turn.key)
        newest = self._turns.get(self._newest_by_key.get(slot, ""))
        if newest is None or newest.said_at <= turn.said_at:
            self._newest_by_key[slot] = turn.id
            if newest is not None:
                self._replaced[newest.id] = turn.said_at
        else:
            self._replaced[turn.id] = newest.said_at

    def hit(self, turn_id: str, score: float, parts: Mapping[str, float] | None = None) -> TurnHit:
        """A found turn with its score (and its parts) and, when replaced, when."""
        return TurnHit(
            turn=self._turns[turn_id],
            score=score,
            replaced_at=self._replaced.get(turn_id),
            parts=parts or {},
            said_in=self._said_in.get(turn_id, ""),
        )

    def search_now(
        self,
        query: str,
        group_ids: Sequence[str],
        limit: int,
        *,
        query_vector: QueryVector = None,
        now: datetime | None = None,
    ) -> list[TurnHit]:
        """Rank every group's turns, merge by score.

        A search with vectors embeds the query with the first stage too, for the turns that
        have only their first-stage vector.
        """
        hits: list[TurnHit] = []
        first_stage_vector = None
        if query_vector is not None and self.first_stage is not None:
            first_stage_vector = self.first_stage.embed([query])[0]
        for group_id in dict.fromkeys(group_ids):
            index = self._groups.get(group_id)
            if index is None or limit <= 0:
                continue
            ranked = rank_turns(
                index,
                query,
                query_vector=query_vector,
                first_stage_vector=first_stage_vector,
                limit=limit,
                now=now,
            )
            hits.extend(self.hit(index.ids[r.position], r.score, r.parts) for r in ranked)
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def newest_now(
        self, group_ids: Sequence[str], kinds: Sequence[str], limit: int
    ) -> list[TurnHit]:
        """The newest current turns of the kinds in the groups."""
        wanted, groups = set(kinds), set(group_ids)
        found = [
            turn
            for turn in self._turns.values()
            if turn.group_id in groups and turn.kind in wanted and turn.id not in self._replaced
        ]
        found.sort(key=lambda t: t.said_at, reverse=True)
        return [self.hit(turn.id, 0.0) for turn in found[:limit]]

    def view_text(self, turn_id: str, view: str) -> str | None:
        """The current text of a turn's view (None: the turn is gone)."""
        turn = self._turns.get(turn_id)
        if turn is None:
            return None
        index = self._groups[turn.group_id]
        position = index.position(turn_id)
        return None if position is None else index.view_text(position, view)

    def pending_now(self, limit: int) -> list[EmbeddingJob]:
        """Views to embed, oldest first (those whose text was embedded already are dropped)."""
        jobs: list[EmbeddingJob] = []
        for slot in list(self._pending):
            if len(jobs) >= limit:
                break
            turn_id, view = slot
            text = self.view_text(turn_id, view)
            if text is None or self._embedded.get(slot) == text_digest(text):
                del self._pending[slot]
                continue
            group_id = self._turns[turn_id].group_id
            jobs.append(EmbeddingJob(turn_id=turn_id, group_id=group_id, view=view, text=text))
        return jobs

    def store_now(self, jobs: Sequence[EmbeddingJob], vectors: np.ndarray) -> int:
        """Keep each vector whose view still has the text it was computed from."""
        return self.keep_vectors(self.current(jobs, vectors))

    def current(
        self, jobs: Sequence[EmbeddingJob], vectors: np.ndarray
    ) -> list[tuple[EmbeddingJob, np.ndarray]]:
        """The jobs, with their vectors, whose view still has the text the vector is of."""
        return [
            (job, vector)
            for job, vector in zip(jobs, vectors, strict=True)
            if self.view_text(job.turn_id, job.view) == job.text
        ]

    def keep_vectors(self, wanted: Sequence[tuple[EmbeddingJob, np.ndarray]]) -> int:
        """Put the current jobs' vectors in place; how many."""
        for job, vector in wanted:
            self.keep_vector(job.turn_id, job.view, text_digest(job.text), vector)
        return len(wanted)

    def keep_vector(self, turn_id: str, view: str, digest: str, vector: np.ndarray) -> None:
        """Put a vector in place and remember which text it stands for."""
        turn = self._turns[turn_id]
        index = self._groups[turn.group_id]
        position = index.position(turn_id)
        if position is None:
            return
        index.set_vector(position, view, np.asarray(vector, dtype=np.float32))
        self._embedded[(turn_id, view)] = digest
        self._pending.pop((turn_id, view), None)

    def forget_now(self, turn_ids: Iterable[str]) -> int:
        """Drop turns and rebuild the groups they were in (forgetting is rare)."""
        gone = [
            self._turns[turn_id] for turn_id in dict.fromkeys(turn_ids) if turn_id in self._turns
        ]
        for group_id in {turn.group_id for turn in gone}:
            self.rebuild(group_id, {turn.id for turn in gone})
        return len(gone)

    def rebuild(self, group_id: str, without: set[str]) -> None:
        """Index a group again without some turns, keeping the vectors of the others."""
        old = self._groups.pop(group_id)
        vectors = {
            (old.ids[position], view): vector
            for (position, view), vector in old.kept_vectors().items()
            if old.ids[position] not in without
        }
        first_stage = {
            old.ids[position]: vector
            for (position, _), vector in old.first_stage.kept(len(old)).items()
            if old.ids[position] not in without
        }
        kept = [self._turns[turn_id] for turn_id in old.ids if turn_id not in without]
        for turn_id in old.ids:
            self._said_in.pop(turn_id, None)
        self._last_sources = {k: v for k, v in self._last_sources.items() if k[0] != group_id}
        self._sources_at = {k: v for k, v in self._sources_at.items() if k[0] != group_id}
        for turn_id in without:
            gone = self._turns.pop(turn_id, None)
            self._replaced.pop(turn_id, None)
            for view in embedded_views(gone.text) if gone else ():
                self._embedded.pop((turn_id, view), None)
        self._newest_by_key = {k: v for k, v in self._newest_by_key.items() if v not in without}
        for turn in kept:
            del self._turns[turn.id]
            self.place(turn)
        for (turn_id, view), vector in vectors.items():
            digest = text_digest(self.view_text(turn_id, view) or "")
            if self._embedded.get((turn_id, view)) == digest:
                self.keep_vector(turn_id, view, digest, vector)
        for turn_id, vector in first_stage.items():
            self.keep_first_stage_vector(turn_id, vector)

    def stats_now(self) -> IndexStats:
        """Counts over the loaded groups."""
        return IndexStats(
            turns=len(self._turns),
            groups=len(self._groups),
            vectors=len(self._embedded),
            pending_vectors=len(self._pending),
        )


__all__ = ["InMemoryRecallIndex", "text_digest"]
