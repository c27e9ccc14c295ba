"""The recall index: every turn of a project, searchable at once, beside the knowledge graph.

graphiti-core's episodes carry no vector and FalkorDB's full-text scoring ranks badly (0.117
recall@10 on LoCoMo against BM25's 0.496), so plait keeps an index of its own: the drain adds
each event it claims (redacted) before it writes to Graphiti, a background pass embeds what has
no vector yet, and a search ranks turns with :func:`plait.state.ranking.rank_turns`. A turn's id
is its event's episode uuid (:func:`plait.state.ports.episode_uuid`), so a hit maps to the
event, and to the Graphiti episode of an event written alone. The assistant's finished replies
are turns too (not raw tool output). Facts are keys of their turn: a decision, rule, preference
or task capture read out of a prompt or a reply is indexed outside the conversation (no turn's
neighbour, sharing its session's score), and its hit names the turn it was read from
(:attr:`TurnHit.said_in`, :func:`read_from`).

This module holds the values that cross the port and the port itself; the SQLite index
(:mod:`plait.adapters.backends.recall_index`) and its in-memory twin
(:mod:`plait.adapters.backends.memory_recall`) implement it, one contract suite runs over both
(``tests/contracts/test_recall_index_contract.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from plait.state.base.redact import redact
from plait.state.events import EventKind, SessionEvent, is_forgotten
from plait.state.groups import user_group_id
from plait.state.ports import QueueEntry, episode_uuid
from plait.state.ranking import QueryVector

# Kinds whose newer event with the same key replaces the older one (a reversed decision).
KEYED_KINDS = frozenset({EventKind.DECISION, EventKind.RULE, EventKind.PREFERENCE})
# Never indexed: raw tool output (a failure in it is indexed as its error). The assistant's
# finished replies are (what it suggested, found or explained is asked about later), though, like
# raw output, they stay out of the knowledge graph (plait.nodes.lasting).
UNINDEXED_KINDS = frozenset({EventKind.TOOL_RESULT})
# Turns only an agent at work in a checkout records: a group that has one is of coding sessions
# (plait.state.rerank.conversation_kind)
CODE_WORK_KINDS = frozenset(
    kind.value
    for kind in (
        EventKind.FILE_READ,
        EventKind.FILE_WRITE,
        EventKind.FILE_EDIT,
        EventKind.FILE_SEARCH,
        EventKind.GIT,
        EventKind.CWD_CHANGE,
    )
)
# Facts as keys: what capture reads out of a turn (its decisions, rules, tasks…) is indexed as a
# key of that turn, not as a turn of the conversation (see :func:`read_from`).
FACT_KINDS = frozenset(
    kind.value
    for kind in (
        EventKind.DECISION,
        EventKind.RULE,
        EventKind.PREFERENCE,
        EventKind.TASK_CREATE,
        EventKind.TASK_COMPLETE,
    )
)
# The turns facts are read from: a user's prompt, the assistant's reply, a subagent's work.
SOURCE_KINDS = frozenset(
    {EventKind.PROMPT.value, EventKind.MESSAGE.value, EventKind.DISCOVERY.value}
)
# What capture adds to a statement whose words lost what it is about ("… (for the cache)"):
# the same words as plait.nodes.capture.statement_summary writes
SUBJECT_ADDED = re.compile(r"\s*\(for the [^()]*\)$")
FACT_MIN_CHARS = 8
# A word, as read_from compares a fact with its turn: markup ("**Use one emoji** at the start")
# and punctuation (capture joins two sentences with "; ") aside
WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class IndexedTurn:
    """One event as the recall index keeps it.

    Attributes:
        id: the event's episode uuid (unique per group, event and root session).
        group_id: the project's (or user's) group.
        session: the root session it was said in; turns of a session are neighbours.
        seq: its order in the session (the event id).
        said_at: when it happened.
        kind: the event kind (``decision``, ``prompt`` …).
        key: its identity for supersede (a topic key, a task id), or "".
        text: what is searched and shown: the summary, and the body when it says more.
    """

    id: str
    group_id: str
    session: str
    seq: int
    said_at: datetime
    kind: str
    key: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnHit:
    """One turn found by a search, best first; ``replaced_at`` set when a newer one replaced it.

    ``parts``: what its score is made of (:class:`plait.state.ranking.RankedTurn`), when ranked.
    ``said_in``: for a fact, the id of the turn it was read from ("" for a turn of its own).
    """

    turn: IndexedTurn
    score: float
    replaced_at: datetime | None = None
    parts: Mapping[str, float] = field(default_factory=dict)
    said_in: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class EmbeddingJob:
    """A turn's view whose vector is missing or out of date (its text changed)."""

    turn_id: str
    group_id: str
    view: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class IndexStats:
    """How much a recall index holds."""

    turns: int
    groups: int
    vectors: int
    pending_vectors: int


def turn_text(event: SessionEvent) -> str:
    """The text a turn is searched by: its summary, and its body when that says more.

    Whole: a long one is searched by every word, and embedded passage by passage
    (:func:`plait.state.ranking.passages`).
    """
    summary, body = event.summary, " ".join(event.body.split())
    if not body:
        text = summary
    elif body.startswith(summary.rstrip("…")):
        text = body
    else:
        text = f"{summary}\n{body}"
    return redact(text)


def indexed_turn(group_id: str, event: SessionEvent) -> IndexedTurn:
    """An event as an indexed turn of ``group_id`` (redacted again: nothing unredacted lands)."""
    return IndexedTurn(
        id=episode_uuid(group_id, event),
        group_id=group_id,
        session=event.root_session_id,
        seq=event.id,
        said_at=event.time,
        kind=event.kind.value,
        key=event.key,
        text=turn_text(event),
    )


def queued_turns(
    entries: Sequence[QueueEntry],
    prefix: str,
    owner: str,
    shared: Callable[[SessionEvent], SessionEvent | None] = lambda event: event,
) -> list[IndexedTurn]:
    """The indexed turns of queued entries; a preference to a personal group.

    The group of the team member who said it (:attr:`SessionEvent.member`), else of ``owner``,
    the service's user. Every other event goes to its project's group as ``shared`` keeps it
    (a prompt without the preferences it states; None: nothing of it).
    """
    turns = []
    for entry in entries:
        event = entry.event
        if not is_indexed(event):
            continue
        if event.kind is EventKind.PREFERENCE:
            turns.append(indexed_turn(user_group_id(prefix, event.member or owner), event))
        elif (kept := shared(event)) is not None:
            turns.append(indexed_turn(entry.group_id, kept))
    return turns


def read_from(fact: IndexedTurn, source: IndexedTurn) -> bool:
    """Whether ``fact`` is a statement capture read out of ``source`` (its words are in it).

    A fact keeps its sentence's words (capture adds "(for the X)" when they lost their subject,
    and a long one ends in "…"), so its words, markup, punctuation and case aside, lie in its
    turn's in the same order. A
    finding (a discovery) read out of the assistant's reply is a key of it too; a discovery
    anywhere else (a subagent's work) is a turn of its own.
    """
    finding = fact.kind == EventKind.DISCOVERY.value and source.kind == EventKind.MESSAGE.value
    if (fact.kind not in FACT_KINDS and not finding) or source.kind not in SOURCE_KINDS:
        return False
    core = SUBJECT_ADDED.sub("", fact.text).rstrip("…").strip()
    if len(core) < FACT_MIN_CHARS:
        return False
    return f" {plain(core)} " in f" {plain(source.text)} "


@lru_cache(maxsize=256)
def plain(text: str) -> str:
    """A text's words in order, as :func:`read_from` compares them (no markup or punctuation).

    Kept for the last texts read: each of a reply's facts is compared with the same reply.
    """
    return " ".join(WORD.findall(text.casefold()))


def is_indexed(event: SessionEvent) -> bool:
    """Whether an event goes into the recall index.

    Anything that says something but raw tool output, and never what a forgotten event leaves
    in its session's log.
    """
    if event.kind in UNINDEXED_KINDS or is_forgotten(event):
        return False
    return bool(event.summary or event.body)


@runtime_checkable
class TextEmbedder(Protocol):
    """A semantic embedder: passages and queries to L2-normalised vectors of one model."""

    name: str

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text."""
        ...

    async def embed_query(self, text: str) -> np.ndarray:
        """The query's vector (with the model's query prefix, if it has one)."""
        ...


@runtime_checkable
class FirstStageEmbedder(Protocol):
    """A static embedder cheap enough to run as turns are added (the index's first stage).

    Synchronous and local: the index calls it in its own thread, for a turn's text when the
    turn is added and for a query searched with vectors.
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text (passages and queries alike)."""
        ...


@runtime_checkable
class TurnSearch(Protocol):
    """Every turn of every group, ranked for a query by words, vectors, time and neighbours.

    What the graphs' nodes use: the drain adds turns, the recall nodes search them.
    """

    async def add_turns(self, turns: Sequence[IndexedTurn]) -> int:
        """Index turns (idempotent by id); return how many were new."""
        ...

    async def search_turns(
        self,
        query: str,
        group_ids: Sequence[str],
        limit: int,
        *,
        query_vector: QueryVector = None,
        now: datetime | None = None,
    ) -> list[TurnHit]:
        """The turns of the groups best matching ``query``, best first, at most ``limit``.

        ``now``: when the query is asked (default the clock), for the times it names relative
        to it ("last week").
        """
        ...

    async def newest_turns(
        self, group_ids: Sequence[str], kinds: Sequence[str], limit: int
    ) -> list[TurnHit]:
        """The newest turns of the given kinds (what a new session starts with), newest first."""
        ...

    async def forget_turns(self, turn_ids: Sequence[str]) -> int:
        """Remove turns (a forgotten memory); return how many were there."""
        ...

    async def stats(self) -> IndexStats:
        """How much the index holds."""
        ...

    async def aclose(self) -> None:
        """Release the file."""
        ...


@runtime_checkable
class EmbeddingJobs(Protocol):
    """The index's queue of texts waiting for their vectors (the background embeds them)."""

    async def pending_embeddings(self, limit: int) -> list[EmbeddingJob]:
        """Views whose vector is missing or stale, oldest first, at most ``limit``.

        None without a vector model (an index that ranks by words alone).
        """
        ...

    async def store_vectors(self, jobs: Sequence[EmbeddingJob], vectors: np.ndarray) -> int:
        """Keep the L2-normalised vectors (one row per job); how many were still wanted.

        A vector of a text that changed meanwhile (a turn's next turn arrived) is dropped.
        """
        ...


@runtime_checkable
class RecallIndex(TurnSearch, EmbeddingJobs, Protocol):
    """A recall index as a backend implements it: the turns and their embedding queue."""


__all__ = [
    "CODE_WORK_KINDS",
    "FACT_KINDS",
    "KEYED_KINDS",
    "SOURCE_KINDS",
    "UNINDEXED_KINDS",
    "EmbeddingJob",
    "IndexStats",
    "IndexedTurn",
    "EmbeddingJobs",
    "FirstStageEmbedder",
    "RecallIndex",
    "TurnSearch",
    "TextEmbedder",
    "TurnHit",
    "indexed_turn",
    "is_indexed",
    "queued_turns",
    "read_from",
    "turn_text",
]
