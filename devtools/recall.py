"""``plait bench recall``: recall@k and NDCG@10 of long-term memory on a conversation dataset.

Every turn of the dataset goes through the real drain path: it becomes one
:class:`~plait.state.events.SessionEvent` appended to the hot store and queued in the same
script, :meth:`plait.background.Background.drain` indexes it in the recall index and writes what
is lasting into the knowledge graph (the drain batch size is 1 for the run, so an episode is one
turn), the background embedding pass gives the index its vectors (with the configured recall
embedder; each text once, cached by text), and each question is asked of
:meth:`plait.background.Background.search`, the search plait serves to refresh, recall and
``plait recall`` (:func:`plait.nodes.memory_search.search_memory`). Hits map back to turn ids
through the episode uuids (:func:`plait.state.ports.episode_uuid`); a fact or entity hit counts
only if it carries its source episodes (an ``episodes`` attribute), otherwise it is left out of
the ranking and counted in ``unmapped_hits``. With ``facts``, each turn is followed by the facts
plait's capture path reads out of it (its decisions, rules, preferences and tasks), recorded as
the hooks record them; the bench does not map them to their turn: a fact's hit counts only
through the turn the recall index says it was read from. With ``through_capture``, each turn is
recorded as a real session records it instead: a user's turn through plait's capture path as a
prompt, anyone else's as the assistant's finished reply (a message, which the recall index
keeps and the knowledge graph does not), each followed by what capture reads out of it; every
event of a turn counts for that turn. Baselines rank the same turns for the same
questions (:data:`SYSTEMS`): BM25 (``bm25s``) without and with stemming, and plain dense
retrieval with the recall embedder (each turn's own vector, when an embedder is configured).

Metrics follow LoCoMo: recall@k is the share of a question's evidence turns found among the top
k retrieved turns; NDCG@10 uses binary relevance. Both are averaged over questions, overall and per
category.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import math
import os
import re
import secrets
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.redis_store import RedisHotStore
from plait.background import Background
from plait.nodes.capture import capture
from plait.state.base.errors import UsageError
from plait.state.base.settings import Settings
from plait.state.events import EventKind, SessionEvent
from plait.state.intents import AssistantText, SessionRef, UserTurn
from plait.state.ports import HotStore, KnowledgeGraph, MemoryHit, episode_uuid
from plait.state.recall import FACT_KINDS, EmbeddingJob, RecallIndex, TextEmbedder
from plait.wiring import open_recall

DEFAULT_KS: tuple[int, ...] = (5, 10, 25, 50)
NDCG_K = 10
PROGRESS_EVERY = 1000  # turns drained, or conversations asked, between progress lines
# plait, then the baselines: BM25 as plait had it (no stemming), BM25 with the same Snowball
# stemmer plait uses, and plain dense retrieval (the recall embedder's cosine over each turn alone)
SYSTEMS = ("plait", "bm25", "bm25-stemmed", "dense")
UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
KIND_BY_SPEAKER = {"user": EventKind.PROMPT}
# Anyone else's turn is a discovery, which the knowledge graph gets too (as LoCoMo's speakers'
# turns must be); a real assistant's reply is a message, indexed the same way but kept out of it
DEFAULT_KIND = EventKind.DISCOVERY

# bm25s sets its own logger to DEBUG on import; its index-building notes are not ours to print.
logging.getLogger("bm25s").setLevel(logging.WARNING)

BenchKnowledgeFactory = Callable[[Settings, str], Awaitable[KnowledgeGraph]]


class DatasetError(UsageError):
    """A recall dataset cannot be read; the message names the file and the bad field."""


# -- dataset ------------------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Turn(_Strict):
    """One utterance of a session."""

    id: str = Field(min_length=1, description="Unique in the dataset, e.g. ``c1:s1:t1``.")
    speaker: str = Field(min_length=1, description="``user`` or ``assistant``.")
    text: str = Field(min_length=1)


class BenchSession(_Strict):
    """One agent session of a conversation."""

    id: str = Field(min_length=1)
    started_at: datetime
    turns: list[Turn] = Field(min_length=1)


class Question(_Strict):
    """A question and the turns that answer it."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    evidence: list[str] = Field(min_length=1, description="Turn ids that hold the answer.")
    category: str = Field(default="uncategorized", min_length=1)
    asked_at: datetime | None = Field(
        default=None,
        description='When it is asked: times it names relative to that ("last week") count from'
        " here (default: the clock when the bench runs).",
    )


class Conversation(_Strict):
    """One project's history: its sessions and the questions asked about it."""

    id: str = Field(min_length=1)
    sessions: list[BenchSession] = Field(min_length=1)
    questions: list[Question] = Field(default_factory=list)

    @model_validator(mode="after")
    def _evidence_exists(self) -> Conversation:
        known = {turn.id for session in self.sessions for turn in session.turns}
        for index, question in enumerate(self.questions):
            for position, turn_id in enumerate(question.evidence):
                if turn_id not in known:
                    raise ValueError(
                        f"questions.{index}.evidence.{position}: question {question.id!r} "
                        f"names turn {turn_id!r}, which conversation {self.id!r} does not have"
                    )
        return self

    def turns(self) -> Iterator[tuple[BenchSession, int, Turn]]:
        """Every turn with its session and position, in order."""
        for session in self.sessions:
            for position, turn in enumerate(session.turns):
                yield session, position, turn


class Dataset(_Strict):
    """A recall dataset: conversations, each one project."""

    name: str = Field(min_length=1)
    conversations: list[Conversation] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids_unique(self) -> Dataset:
        for what, ids in (
            ("conversation", [c.id for c in self.conversations]),
            ("turn", [t.id for c in self.conversations for _, _, t in c.turns()]),
            ("question", [q.id for c in self.conversations for q in c.questions]),
        ):
            repeated = first_repeated(ids)
            if repeated is not None:
                raise ValueError(f"{what} id {repeated!r} is used more than once")
        return self


def first_repeated(ids: Iterable[str]) -> str | None:
    """The first id seen twice, or None."""
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            return item
        seen.add(item)
    return None


def describe_dataset_error(error: ValidationError) -> str:
    """One clause per problem: the dotted field path and what is wrong with it."""
    clauses = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "(top level)"
        clauses.append(f"{location}: {item['msg'].removeprefix('Value error, ')}")
    return "; ".join(clauses)


def parse_dataset(data: Any, *, source: str = "dataset") -> Dataset:
    """Validate already-decoded JSON, or raise :class:`DatasetError` naming the bad field."""
    try:
        return Dataset.model_validate(data)
    except ValidationError as error:
        raise DatasetError(f"{source}: {describe_dataset_error(error)}") from None


def write_dataset(dataset: Dataset, output: Path, left_out: Mapping[str, int]) -> None:
    """Write a converted dataset; say on stderr how big it is and what the converter left out."""
    output.write_text(dataset.model_dump_json(indent=1, exclude_none=True), encoding="utf-8")
    turns = sum(1 for c in dataset.conversations for _ in c.turns())
    questions = sum(len(c.questions) for c in dataset.conversations)
    print(f"{output}: {turns} turns, {questions} questions", file=sys.stderr)
    for what, count in sorted(left_out.items()):
        print(f"  {what}: {count}", file=sys.stderr)


# -- LoCoMo-shaped sources (LoCoMo, and REALTALK, its authors' real-world sequel) ---------------
# the category labels as LoCoMo's data reads them (its paper lists them in another order)
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
DIALOG_ID = re.compile(
    r"D:?(?P<session>\d+):0*(?P<turn>\d+)(?:\s*-\s*(?:D:?(?P=session):)?0*(?P<last>\d+))?"
)


def dialog_ids(raw: Iterable[str]) -> list[str]:
    """The dialog ids evidence entries name, repaired where the intent is plain.

    ``"D8:6; D9:17"`` → D8:6, D9:17; ``"D:11:26"`` → D11:26; ``"D30:05"`` → D30:5; a range
    ``"D12:3-D12:5"`` or ``"D12:3-5"`` → D12:3, D12:4, D12:5. An entry naming no dialog id gives
    none.
    """
    ids = []
    for match in (m for item in raw for m in DIALOG_ID.finditer(item)):
        first = int(match["turn"])
        last = int(match["last"]) if match["last"] else first
        ids += [f"D{match['session']}:{turn}" for turn in range(first, max(first, last) + 1)]
    return list(dict.fromkeys(ids))


def locomo_question(
    prefix: str, index: int, raw: Mapping[str, Any], known: set[str], dropped: Counter[str]
) -> Question | None:
    """A LoCoMo-shaped question (``prefix:q<index>``), or None when its evidence names no turn.

    ``known``: the turn ids (``prefix:D1:3``) there are; what is dropped is counted.
    """
    listed = raw.get("evidence", [])
    named = [f"{prefix}:{d}" for d in dialog_ids(listed)]
    evidence = [turn_id for turn_id in named if turn_id in known]
    dropped["evidence entries not a dialog id"] += sum(not DIALOG_ID.search(e) for e in listed)
    dropped["evidence ids naming no turn"] += len(named) - len(evidence)
    if not evidence:
        dropped["questions without evidence"] += 1
        return None
    return Question(
        id=f"{prefix}:q{index}",
        text=raw["question"],
        evidence=evidence,
        category=LOCOMO_CATEGORIES.get(raw.get("category", 0), "uncategorized"),
    )


def load_dataset(path: Path | str) -> Dataset:
    """Read and validate a dataset file, or raise :class:`DatasetError` naming what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DatasetError(f"{path}: cannot read: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: not JSON: {error}") from None
    return parse_dataset(data, source=str(path))


# -- metrics (pure) -----------------------------------------------------------------------------
def recall_at_k(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """The share of the evidence found among the first ``k`` ranked ids (LoCoMo's recall)."""
    wanted = set(evidence)
    if not wanted or k <= 0:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def ndcg_at_k(ranked: Sequence[str], evidence: Collection[str], k: int = NDCG_K) -> float:
    """Normalized discounted cumulative gain at ``k`` with binary relevance.

    A relevant id counts at its first position only, so a repeated id earns nothing twice.
    """
    wanted = set(evidence)
    if not wanted or k <= 0:
        return 0.0
    seen: set[str] = set()
    gain = 0.0
    for position, item in enumerate(ranked[:k], start=1):
        if item in wanted and item not in seen:
            gain += 1.0 / math.log2(position + 1)
        seen.add(item)
    ideal = sum(1.0 / math.log2(position + 1) for position in range(1, min(len(wanted), k) + 1))
    return gain / ideal


def unique_in_order(items: Iterable[str]) -> list[str]:
    """Items without repeats, first occurrence kept."""
    return list(dict.fromkeys(items))


def parse_ks(text: str) -> tuple[int, ...]:
    """``"5,10,25"`` → ``(5, 10, 25)``: positive, sorted, without repeats."""
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise DatasetError(f"--k {text!r}: expected comma-separated whole numbers") from None
    if not values or values[0] <= 0:
        raise DatasetError(f"--k {text!r}: expected positive whole numbers")
    return tuple(values)


# -- mapping hits back to turns (pure) ----------------------------------------------------------
def turns_of_hit(hit: MemoryHit, turn_by_episode: dict[str, str]) -> list[str]:
    """The turns a hit stands for: its own episode, or the source episodes it carries."""
    if hit.uuid in turn_by_episode:
        return [turn_by_episode[hit.uuid]]
    sources = getattr(hit, "episodes", None) or ()
    return [turn_by_episode[uuid] for uuid in sources if uuid in turn_by_episode]


def ranked_turns(
    hits: Sequence[MemoryHit], turn_by_episode: dict[str, str]
) -> tuple[list[str], int]:
    """Turn ids in hit order without repeats, and how many hits mapped to no turn."""
    turns: list[str] = []
    unmapped = 0
    for hit in hits:
        mapped = turns_of_hit(hit, turn_by_episode)
        unmapped += not mapped
        turns.extend(mapped)
    return unique_in_order(turns), unmapped


# -- baselines ---------------------------------------------------------------------------------
@dataclass
class BM25Index:
    """BM25 over the turns of one conversation (``bm25s``, English stopwords removed).

    ``stemmed``: words Snowball-stemmed (PyStemmer's English, as plait's own index stems).
    """

    turn_ids: list[str]
    retriever: bm25s.BM25
    stemmer: Any = None

    @classmethod
    def build(cls, turns: Sequence[Turn], *, stemmed: bool = False) -> BM25Index:
        """Index the turns' texts."""
        stemmer = Stemmer.Stemmer("english") if stemmed else None
        retriever = bm25s.BM25()
        texts = [t.text for t in turns]
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever.index(tokens, show_progress=False)
        return cls(turn_ids=[t.id for t in turns], retriever=retriever, stemmer=stemmer)

    def search(self, query: str, limit: int) -> list[str]:
        """Turn ids with a positive score, best first, at most ``limit``."""
        words = bm25s.tokenize(
            query, stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )
        known = [[word for word in words[0] if word in self.retriever.vocab_dict]]
        if not known[0] or not self.turn_ids:
            return []
        documents, scores = self.retriever.retrieve(
            known, k=min(limit, len(self.turn_ids)), show_progress=False
        )
        return [
            self.turn_ids[int(doc)]
            for doc, score in zip(documents[0], scores[0], strict=True)
            if score > 0
        ]


@dataclass
class DenseIndex:
    """Plain dense retrieval over one conversation's turns: the cosine of each turn alone."""

    turn_ids: list[str]
    matrix: np.ndarray
    embedder: TextEmbedder

    @classmethod
    async def build(cls, embedder: TextEmbedder, turns: Sequence[Turn]) -> DenseIndex:
        """Embed every turn's text (the embedder caches by text)."""
        matrix = await embedder.embed_passages([t.text for t in turns])
        return cls(turn_ids=[t.id for t in turns], matrix=matrix, embedder=embedder)

    async def search(self, query: str, limit: int) -> list[str]:
        """Turn ids by cosine to the query, best first, at most ``limit``."""
        if not self.turn_ids:
            return []
        scores = self.matrix @ await self.embedder.embed_query(query)
        return [self.turn_ids[int(i)] for i in np.argsort(-scores, kind="stable")[:limit]]


# -- report -------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Scores:
    """Mean recall@k and NDCG@10 of one system over a set of questions."""

    questions: int
    recall: dict[int, float]
    ndcg: float


@dataclass(frozen=True, kw_only=True, slots=True)
class QuestionResult:
    """One question: its evidence and each system's ranked turn ids (top ``depth``)."""

    question_id: str
    conversation_id: str
    category: str
    evidence: tuple[str, ...]
    ranked: dict[str, tuple[str, ...]]

    def recall(self, system: str, k: int) -> float:
        """Recall@k of one system."""
        return recall_at_k(self.ranked[system], self.evidence, k)

    def ndcg(self, system: str) -> float:
        """NDCG@10 of one system."""
        return ndcg_at_k(self.ranked[system], self.evidence, NDCG_K)


def score(results: Sequence[QuestionResult], system: str, ks: Sequence[int]) -> Scores:
    """Mean scores of one system over the results (zeros for no results)."""
    count = len(results)
    if not count:
        return Scores(questions=0, recall=dict.fromkeys(ks, 0.0), ndcg=0.0)
    return Scores(
        questions=count,
        recall={k: sum(r.recall(system, k) for r in results) / count for k in ks},
        ndcg=sum(r.ndcg(system) for r in results) / count,
    )


@dataclass(kw_only=True)
class RecallReport:
    """Everything one run measured."""

    dataset: str
    backend: str
    ks: tuple[int, ...]
    embedder: str = "none (words alone)"
    vectors: int = 0
    embedded_share: float = 1.0
    depth: int
    turns: int
    episodes_written: int
    dead_lettered: int
    total_hits: int
    unmapped_hits: int
    facts: int = 0
    through_capture: bool = False
    systems: tuple[str, ...] = SYSTEMS
    results: list[QuestionResult] = field(default_factory=list)

    def overall(self, system: str) -> Scores:
        """Scores over every question."""
        return score(self.results, system, self.ks)

    def categories(self) -> list[str]:
        """Categories in first-seen order."""
        return unique_in_order(r.category for r in self.results)

    def by_category(self, system: str) -> dict[str, Scores]:
        """Scores per category."""
        grouped: dict[str, list[QuestionResult]] = defaultdict(list)
        for result in self.results:
            grouped[result.category].append(result)
        return {name: score(grouped[name], system, self.ks) for name in self.categories()}

    def to_dict(self) -> dict[str, Any]:
        """Plain data: settings, counts, scores overall and per category, every question."""
        return {
            "dataset": self.dataset,
            "backend": self.backend,
            "embedder": self.embedder,
            "vectors": self.vectors,
            "embedded_share": self.embedded_share,
            "ks": list(self.ks),
            "depth": self.depth,
            "turns": self.turns,
            "questions": len(self.results),
            "episodes_written": self.episodes_written,
            "dead_lettered": self.dead_lettered,
            "total_hits": self.total_hits,
            "unmapped_hits": self.unmapped_hits,
            "facts": self.facts,
            "through_capture": self.through_capture,
            "overall": {s: scores_dict(self.overall(s)) for s in self.systems},
            "by_category": {
                name: {s: scores_dict(self.by_category(s)[name]) for s in self.systems}
                for name in self.categories()
            },
            "results": [question_dict(r, self.ks) for r in self.results],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2)


def scores_dict(scores: Scores) -> dict[str, Any]:
    """JSON-ready scores (``recall@5`` keys)."""
    return {
        "questions": scores.questions,
        **{f"recall@{k}": round(v, 4) for k, v in scores.recall.items()},
        f"ndcg@{NDCG_K}": round(scores.ndcg, 4),
    }


def question_dict(result: QuestionResult, ks: Sequence[int]) -> dict[str, Any]:
    """JSON-ready result of one question, with each system's ranked turn ids."""
    data = asdict(result)
    data["evidence"] = list(result.evidence)
    data["ranked"] = {system: list(turns) for system, turns in result.ranked.items()}
    data["scores"] = {
        system: {
            **{f"recall@{k}": round(result.recall(system, k), 4) for k in ks},
            f"ndcg@{NDCG_K}": round(result.ndcg(system), 4),
        }
        for system in result.ranked
    }
    return data


def score_row(label: str, system: str, scores: Scores) -> str:
    """One markdown table row."""
    cells = [f"{scores.recall[k]:.3f}" for k in sorted(scores.recall)]
    return f"| {label} | {system} | {scores.questions} | {' | '.join(cells)} | {scores.ndcg:.3f} |"


def embedded_part(share: float) -> str:
    """How much of each conversation the recall embedder reached, when not all of it."""
    if share >= 1:
        return ""
    return f" (the oldest {share:.0%} of each conversation's texts; the rest by the first stage)"


def render_report(report: RecallReport) -> str:
    """The report as markdown: what was run, then one table overall and per category."""
    header = " | ".join(f"recall@{k}" for k in report.ks)
    lines = [
        f"Dataset `{report.dataset}`: {report.turns} turns, {len(report.results)} questions; "
        f"knowledge graph `{report.backend}`, {report.episodes_written} episodes written "
        f"through the drain ({report.dead_lettered} dead-lettered), search depth {report.depth}; "
        f"recall embedder {report.embedder}, {report.vectors} vectors"
        f"{embedded_part(report.embedded_share)}"
        f"{f'; {report.facts} facts read out of the turns by capture' if report.facts else ''}"
        f"{'; every turn recorded through the capture path' if report.through_capture else ''}.",
        f"Hits that mapped to no turn (facts or entities without source episodes): "
        f"{report.unmapped_hits} of {report.total_hits}.",
        "",
        f"| category | system | questions | {header} | ndcg@{NDCG_K} |",
        "|---|---|---|" + "---|" * (len(report.ks) + 1),
    ]
    for system in report.systems:
        lines.append(score_row("**all**", system, report.overall(system)))
    for name in report.categories():
        for system in report.systems:
            lines.append(score_row(name, system, report.by_category(system)[name]))
    return "\n".join(lines) + "\n"


# -- ingestion through the drain path -----------------------------------------------------------
def group_for(run_id: str, conversation: Conversation) -> str:
    """A knowledge-graph group of one conversation, unique to the run."""
    return UNSAFE.sub("-", f"recall-{run_id}-{conversation.id}")[:120]


def root_for(run_id: str, conversation: Conversation, session: BenchSession) -> str:
    """The root session id of one dataset session, unique to the run."""
    return f"recall-{run_id}-{conversation.id}-{session.id}"


def event_for_turn(root: str, session: BenchSession, position: int, turn: Turn) -> SessionEvent:
    """A turn as an event that drains: user turns are prompts, others discoveries."""
    return SessionEvent(
        root_session_id=root,
        session_id=root,
        kind=KIND_BY_SPEAKER.get(turn.speaker.lower(), DEFAULT_KIND),
        summary=turn.text,
        body=turn.text,
        keywords=(turn.id,),
        key=turn.id,
        source_hook="recall-bench",
        time=session.started_at + timedelta(minutes=position),
    )


def captured_events(
    root: str, said_at: datetime, text: str, *, assistant: bool
) -> list[SessionEvent]:
    """What plait's capture path makes of a text, dated when it was said.

    ``assistant``: the text is the assistant's finished reply (a message, and the decisions
    and findings read out of it); otherwise a user's prompt (and the facts read out of it).
    """
    intent = AssistantText(text=text) if assistant else UserTurn(text=text)
    found = capture([intent], SessionRef(session_id=root, root_session_id=root)).events
    return [event.model_copy(update={"time": said_at}) for event in found]


def facts_of_turn(root: str, turn: Turn, said_at: datetime) -> list[SessionEvent]:
    """The facts capture reads out of a turn, dated when the turn was said.

    An assistant's turn is read as its reply, anyone else's as a user's prompt.
    """
    assistant = turn.speaker.lower() == "assistant"
    found = captured_events(root, said_at, turn.text, assistant=assistant)
    return [event for event in found if event.kind.value in FACT_KINDS]


async def record_conversation(
    store: HotStore,
    run_id: str,
    conversation: Conversation,
    *,
    facts: bool = False,
    through_capture: bool = False,
) -> tuple[dict[str, str], int]:
    """Append and queue every turn, one session at a time; episode uuid → turn id, and facts.

    With ``facts`` each turn is followed by what capture reads out of it; those are not mapped
    to a turn here (the recall index says which turn a fact was read from). With
    ``through_capture`` each turn is recorded as :func:`captured_events` makes it (a user's turn
    a prompt, anyone else's the assistant's reply), and every event of it maps to the turn (a
    turn capture makes nothing of, an "ok", is not recorded).
    """
    group = group_for(run_id, conversation)
    turn_by_episode: dict[str, str] = {}
    recorded_facts = 0
    for session in conversation.sessions:
        root = root_for(run_id, conversation, session)
        events: list[SessionEvent] = []
        turn_ids: list[str | None] = []
        for position, turn in enumerate(session.turns):
            event = event_for_turn(root, session, position, turn)
            if through_capture:  # as a real session records it: a user's prompt, or a reply
                reply = turn.speaker.lower() != "user"
                found = captured_events(root, event.time, turn.text, assistant=reply)
                events += found
                turn_ids += [turn.id] * len(found)
                recorded_facts += sum(e.kind.value in FACT_KINDS for e in found)
                continue
            read = facts_of_turn(root, turn, event.time) if facts else []
            events += [event, *read]
            turn_ids += [turn.id, *[None] * len(read)]
            recorded_facts += len(read)
        stored = await store.append_events(root, events, enqueue_group=group)
        for event, turn_id in zip(stored, turn_ids, strict=True):
            if turn_id is not None:
                turn_by_episode[episode_uuid(group, event)] = turn_id
    return turn_by_episode, recorded_facts


def bench_settings(settings: Settings, data_dir: Path) -> Settings:
    """The run's settings: its data dir, one event per drain batch, every core for embedding.

    A batch of one makes every turn its own episode; the embedding pass may use every core
    because nothing else runs.
    """
    redis = settings.redis.model_copy(update={"batch_size": 1})
    recall = settings.recall.model_copy(update={"threads": max(1, os.cpu_count() or 1)})
    return settings.model_copy(update={"redis": redis, "recall": recall, "data_dir": data_dir})


async def in_memory_knowledge(settings: Settings, falkordb_url: str) -> KnowledgeGraph:
    """A :class:`BenchKnowledgeFactory` for the in-memory reference graph."""
    return InMemoryKnowledgeGraph()


async def graphiti_knowledge(settings: Settings, falkordb_url: str) -> KnowledgeGraph:
    """A :class:`BenchKnowledgeFactory` for Graphiti on the FalkorDB server (the default)."""
    from plait.adapters.backends.graphiti import open_knowledge_graph

    return await open_knowledge_graph(settings, falkordb_url)


async def search_question(
    background: Background,
    question: Question,
    group: str,
    depth: int,
    turn_by_episode: dict[str, str],
) -> tuple[list[str], int, int]:
    """Ranked turn ids for a question, the number of hits, and how many mapped to no turn."""
    hits = await background.search(group, question.text, depth, now=question.asked_at)
    turns, unmapped = ranked_turns(hits, turn_by_episode)
    return turns[:depth], len(hits), unmapped


async def bench_conversations(
    dataset: Dataset,
    ks: Sequence[int],
    *,
    store: HotStore,
    settings: Settings,
    falkordb_url: str,
    knowledge_factory: BenchKnowledgeFactory,
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
    embedded_share: float = 1.0,
    facts: bool = False,
    through_capture: bool = False,
) -> RecallReport:
    """Ingest every conversation through the drain, embed, then ask every question of both.

    ``progress`` hears a line at each step (a long dataset takes hours). ``embedded_share``:
    how much of each conversation the recall embedder reaches before the questions (see
    :func:`embed_oldest`); the rest is ranked as while the background catches up. ``facts``:
    each turn is followed by the facts capture reads out of it (:func:`facts_of_turn`).
    ``through_capture``: each turn is recorded as a real session records it
    (:func:`captured_events`).
    """
    say = progress or (lambda line: None)
    run_id = secrets.token_hex(4)
    depth = max([*ks, NDCG_K])
    settings = bench_settings(settings, data_dir)
    turn_by_episode: dict[str, str] = {}
    fact_count = 0
    for conversation in dataset.conversations:
        mapped, read = await record_conversation(
            store, run_id, conversation, facts=facts, through_capture=through_capture
        )
        turn_by_episode |= mapped
        fact_count += read
    say(
        f"recorded {len(set(turn_by_episode.values()))} turns of "
        f"{len(dataset.conversations)} conversations"
        f"{f' and {fact_count} facts read out of them' if facts or through_capture else ''}"
    )
    recall, embedder = open_recall(settings)
    background = Background(
        store=store,
        settings=settings,
        group_id=group_for(run_id, dataset.conversations[0]),
        knowledge_factory=lambda: knowledge_factory(settings, falkordb_url),
        consumer=f"recall-bench-{run_id}",
        recall=recall,
        embedder=embedder,
    )
    batches = itertools.count(1)  # a batch is one turn (batch size 1)

    async def count_batch() -> None:
        if (done := next(batches)) % PROGRESS_EVERY == 0:
            say(f"drained {done} of {len(turn_by_episode)} turns")

    try:
        drained = await background.drain_until_empty(before_batch=count_batch)
        say(f"drained: {drained.written} episodes written, {drained.dead_lettered} dead letters")
        if embedded_share >= 1:
            vectors = await background.embed_pending()
        else:
            vectors = await embed_oldest(recall, embedder, embedded_share)
        say(f"embedded: {vectors} vectors")
        knowledge = await background.knowledge()
        report = RecallReport(
            dataset=dataset.name,
            backend=type(knowledge).__name__,
            embedder=embedder.name if embedder is not None else "none (words alone)",
            vectors=vectors,
            embedded_share=embedded_share,
            ks=tuple(sorted(set(ks))),
            depth=depth,
            turns=len(set(turn_by_episode.values())),
            episodes_written=drained.written,
            dead_lettered=drained.dead_lettered,
            total_hits=0,
            unmapped_hits=0,
            facts=fact_count,
            through_capture=through_capture,
            systems=SYSTEMS if embedder is not None else SYSTEMS[:-1],
        )
        count = len(dataset.conversations)
        for number, conversation in enumerate(dataset.conversations, start=1):
            await ask_conversation(
                report, background, run_id, conversation, turn_by_episode, embedder
            )
            if number % PROGRESS_EVERY == 0 or number == count:
                say(f"asked the questions of {number} of {count} conversations")
    finally:
        await background.aclose()
    return report


async def embed_oldest(recall: RecallIndex, embedder: TextEmbedder | None, share: float) -> int:
    """Vectors for the oldest ``share`` of each group's waiting texts; how many were stored.

    What a search meets while the background embedder is part-way through a conversation: its
    older turns have their vectors, the newer ones only what they got when they were indexed.
    """
    if embedder is None or share <= 0:
        return 0
    waiting: dict[str, list[EmbeddingJob]] = defaultdict(list)
    for job in await recall.pending_embeddings(sys.maxsize):
        waiting[job.group_id].append(job)
    chosen = [job for jobs in waiting.values() for job in jobs[: math.ceil(share * len(jobs))]]
    if not chosen:
        return 0
    vectors = await embedder.embed_passages([job.text for job in chosen])
    return await recall.store_vectors(chosen, vectors)


async def ask_conversation(
    report: RecallReport,
    background: Background,
    run_id: str,
    conversation: Conversation,
    turn_by_episode: dict[str, str],
    embedder: TextEmbedder | None = None,
) -> None:
    """Ask every question of one conversation of plait and of the baselines; add the results."""
    group = group_for(run_id, conversation)
    turns = [turn for _, _, turn in conversation.turns()]
    bm25, stemmed = BM25Index.build(turns), BM25Index.build(turns, stemmed=True)
    dense = await DenseIndex.build(embedder, turns) if embedder is not None else None
    for question in conversation.questions:
        plait_turns, hits, unmapped = await search_question(
            background, question, group, report.depth, turn_by_episode
        )
        report.total_hits += hits
        report.unmapped_hits += unmapped
        report.results.append(
            QuestionResult(
                question_id=question.id,
                conversation_id=conversation.id,
                category=question.category,
                evidence=tuple(question.evidence),
                ranked={
                    "plait": tuple(plait_turns),
                    "bm25": tuple(bm25.search(question.text, report.depth)),
                    "bm25-stemmed": tuple(stemmed.search(question.text, report.depth)),
                    **(
                        {"dense": tuple(await dense.search(question.text, report.depth))}
                        if dense is not None
                        else {}
                    ),
                },
            )
        )


@asynccontextmanager
async def bench_backend(
    data_dir: Path | None, redis_url: str | None
) -> AsyncIterator[tuple[RedisHotStore, str, Path]]:
    """A hot store with a key prefix of its own, and the run's data dir.

    The store is on ``redis_url`` or an embedded server; the data dir is ``data_dir``, or a
    fresh temporary one, removed afterwards.
    """
    from plait.adapters.backends.embedded import EmbeddedFalkorDB

    prefix = f"plait-recall-bench:{secrets.token_hex(4)}:"
    scratch = None if data_dir is not None else tempfile.TemporaryDirectory(prefix="plait-recall-")
    directory = data_dir or Path(scratch.name)  # type: ignore[union-attr]
    server = None
    if redis_url is None:
        server = EmbeddedFalkorDB(directory)
        redis_url = (await asyncio.to_thread(server.start)).url
    store = RedisHotStore.from_url(redis_url, prefix=prefix)
    try:
        yield store, redis_url, directory
    finally:
        await store.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)
        if scratch is not None:
            scratch.cleanup()


async def run_recall_bench(
    dataset_path: Path | str,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    knowledge_factory: BenchKnowledgeFactory | None = None,
    data_dir: Path | str | None = None,
    redis_url: str | None = None,
    settings: Settings | None = None,
    progress: Callable[[str], None] | None = None,
    embedded_share: float = 1.0,
    facts: bool = False,
    through_capture: bool = False,
) -> RecallReport:
    """Measure recall@k and NDCG@10 of plait's long-term memory against BM25 on a dataset.

    Args:
        dataset_path: a dataset JSON file (see :class:`Dataset`).
        ks: the cut-offs of recall@k.
        knowledge_factory: opens the knowledge graph from (settings, FalkorDB URL); default
            Graphiti (:func:`graphiti_knowledge`); :func:`in_memory_knowledge` for the reference.
        data_dir: where the embedded server keeps its data (default: a fresh temporary
            directory, so the run never touches the user's own memory).
        redis_url: use this server instead of starting an embedded one; the run's keys get a
            prefix of their own.
        settings: plait settings (default: loaded for ``data_dir``, LLM and embedder included).
        progress: hears a line at each step of the run.
        embedded_share: the share of each conversation's texts given the recall embedder's
            vectors before the questions, oldest first (1: all, as plait is once caught up;
            0: none, every turn ranked by its first-stage vector or its words).
        facts: follow each turn with the facts plait's capture reads out of it, as the hooks
            record them (facts as keys of their turn).
        through_capture: record each turn as a real session records it, through plait's
            capture path (a user's turn a prompt, anyone else's the assistant's reply).
    """
    dataset = load_dataset(dataset_path)
    directory = Path(data_dir) if data_dir is not None else None
    settings = settings or Settings.load(directory or Path.cwd())
    async with bench_backend(directory, redis_url) as (store, url, run_dir):
        return await bench_conversations(
            dataset,
            ks,
            store=store,
            settings=settings,
            falkordb_url=url,
            knowledge_factory=knowledge_factory or graphiti_knowledge,
            data_dir=run_dir,
            progress=progress,
            embedded_share=embedded_share,
            facts=facts,
            through_capture=through_capture,
        )


__all__ = [
    "DEFAULT_KS",
    "DIALOG_ID",
    "LOCOMO_CATEGORIES",
    "SYSTEMS",
    "BM25Index",
    "DenseIndex",
    "BenchKnowledgeFactory",
    "BenchSession",
    "Conversation",
    "Dataset",
    "DatasetError",
    "Question",
    "QuestionResult",
    "RecallReport",
    "Scores",
    "Turn",
    "bench_conversations",
    "dialog_ids",
    "embed_oldest",
    "event_for_turn",
    "captured_events",
    "facts_of_turn",
    "graphiti_knowledge",
    "in_memory_knowledge",
    "load_dataset",
    "locomo_question",
    "ndcg_at_k",
    "parse_dataset",
    "parse_ks",
    "ranked_turns",
    "recall_at_k",
    "render_report",
    "run_recall_bench",
    "turns_of_hit",
    "write_dataset",
]
