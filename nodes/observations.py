"""Pure helpers for observations: topic keys, search, duplicates, contradictions, aging, events.

No I/O and no LangGraph here: :mod:`plait.observations` reads and writes the store and calls
these to decide what to write.

Search is BM25 over each observation's words (title three times, topic key twice, then type,
files and content), with light stemming and a prefix fallback, so an observation is found the
moment it is saved, before the drain has carried it to the knowledge graph.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from plait.state.events import EventKind, SessionEvent, truncate_utf8
from plait.state.observations import (
    SESSION_TOPIC_PREFIX,
    Observation,
    ObservationDraft,
    ObservationType,
)
from plait.state.supersede import supersedes, word_set
from plait.state.words import stem

WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = word_set(
    "a an the and or but of to in on for with as at by via from into is are was were be been "
    "it its this that these those we i you they our my your their not no so if then than"
)
SLUG_STOPWORDS = STOPWORDS | {"use", "using", "should", "will", "about"}
SLUG_WORDS_MAX = 6
SLUG_MAX_CHARS = 60
FAMILY: dict[str, str] = {
    "decision": "decision",
    "architecture": "architecture",
    "bugfix": "bug",
    "discovery": "discovery",
    "pattern": "pattern",
    "config": "config",
    "preference": "preference",
    "learning": "learning",
    "session_summary": "session",
    "progress": "progress",
}
FIELD_WEIGHTS = (("title", 3), ("topic_key", 2), ("type", 1), ("files", 1), ("content", 1))
BM25_K1 = 1.2
BM25_B = 0.75
PREFIX_MIN_CHARS = 3
# Types where a newer observation on the same subject replaces the older one.
SUPERSEDING_TYPES = frozenset({"decision", "architecture", "config", "preference", "pattern"})
CLAIM_MAX_CHARS = 300
SNIPPET_MAX_CHARS = 280
WHERE = re.compile(r"^\W*where\W*:\s*(?P<rest>.+)$", re.IGNORECASE | re.MULTILINE)
WHAT = re.compile(r"^\W*what\W*:\s*(?P<rest>.+)$", re.IGNORECASE | re.MULTILINE)
PATH_LIKE = re.compile(r"^(?:[\w.@~+-]+/)+[\w.@+-]*$|^[\w@+-]+\.[A-Za-z0-9]{1,8}$")
EVENT_KINDS: dict[str, EventKind] = {
    "decision": EventKind.DECISION,
    "architecture": EventKind.DECISION,
    "preference": EventKind.PREFERENCE,
    "bugfix": EventKind.ERROR_RESOLVED,
}
OBSERVATION_HOOK = "observation"


# -- topic keys ---------------------------------------------------------------------------------
def slug(text: str, *, words_max: int = SLUG_WORDS_MAX) -> str:
    """Lower-case words of ``text`` joined by ``-``, without filler words."""
    words = [w for w in WORD.findall(text.lower()) if w not in SLUG_STOPWORDS]
    return "-".join(words[:words_max])[:SLUG_MAX_CHARS].strip("-")


def suggest_topic_key(title: str, type: ObservationType) -> str:
    """A stable topic key for a title and type: ``<family>/<slug>``, the same every time."""
    return f"{FAMILY[type]}/{slug(title) or 'untitled'}"


def session_topic_key(root_session_id: str) -> str:
    """The topic key of a session's summary."""
    return SESSION_TOPIC_PREFIX + (slug(root_session_id, words_max=12) or "session")


# -- words --------------------------------------------------------------------------------------
def terms(text: str) -> list[str]:
    """The stemmed words of ``text``, filler words left out."""
    return [stem(w) for w in WORD.findall(text.lower()) if w not in STOPWORDS]


def field_text(observation: Observation, name: str) -> str:
    """The text of one searchable field."""
    if name == "files":
        return " ".join(observation.files)
    if name == "type":
        return observation.type.replace("_", " ")
    return str(getattr(observation, name))


def frequencies(observation: Observation) -> Counter[str]:
    """Weighted term counts of an observation."""
    counts: Counter[str] = Counter()
    for name, weight in FIELD_WEIGHTS:
        for term in terms(field_text(observation, name)):
            counts[term] += weight
    return counts


# -- search ---------------------------------------------------------------------------------------
def saturated(frequency: int, norm: float) -> float:
    """BM25's term-frequency saturation, with the document length norm."""
    return frequency * (BM25_K1 + 1) / (frequency + BM25_K1 * norm)


def words_of(title: str, content: str) -> frozenset[str]:
    """The term set of a title and content (what duplicate checks compare)."""
    return frozenset(terms(f"{title}\n{content}"))


@dataclass(kw_only=True)
class ObservationIndex:
    """BM25 over a group's observations, updated one observation at a time.

    It also keeps what the duplicate check compares (each observation's term set and content
    hash), so a save costs the size of one observation, not of the group.
    """

    documents: dict[str, Observation] = field(default_factory=dict)
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    postings: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    words: dict[str, frozenset[str]] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    total_length: int = 0

    @classmethod
    def build(cls, observations: Iterable[Observation]) -> ObservationIndex:
        """Index the observations."""
        index = cls()
        for observation in observations:
            index.add(observation)
        return index

    def add(self, observation: Observation) -> None:
        """Index an observation (replacing the version indexed before)."""
        self.remove(observation.id)
        key = observation.id
        count = frequencies(observation)
        self.documents[key] = observation
        self.counts[key] = count
        self.lengths[key] = sum(count.values())
        self.total_length += self.lengths[key]
        for term in count:
            self.postings[term].add(key)
        self.words[key] = words_of(observation.title, observation.content)
        self.hashes[key] = content_hash(observation.content)

    def remove(self, observation_id: str) -> None:
        """Take an observation out of the index (nothing if it is not in)."""
        count = self.counts.pop(observation_id, None)
        if count is None:
            return
        self.total_length -= self.lengths.pop(observation_id, 0)
        for term in count:
            holders = self.postings[term]
            holders.discard(observation_id)
            if not holders:
                del self.postings[term]
        for table in (self.documents, self.words, self.hashes):
            table.pop(observation_id, None)

    @property
    def average_length(self) -> float:
        """The mean weighted length of the indexed observations."""
        return self.total_length / len(self.counts) if self.counts else 1.0

    def query_terms(self, query: str) -> list[str]:
        """The query's terms; a word the index lacks matches the indexed words it begins."""
        found: list[str] = []
        for term in dict.fromkeys(terms(query)):
            if term in self.postings:
                found.append(term)
            elif len(term) >= PREFIX_MIN_CHARS:
                found.extend(t for t in self.postings if t.startswith(term))
        return list(dict.fromkeys(found))

    def idf(self, term: str) -> float:
        """BM25's inverse document frequency."""
        seen = len(self.postings.get(term, ()))
        return math.log(1 + (len(self.counts) - seen + 0.5) / (seen + 0.5))

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score of every observation sharing a term with the query, by id."""
        scores: dict[str, float] = defaultdict(float)
        average = self.average_length
        for term in self.query_terms(query):
            weight = self.idf(term)
            for key in self.postings.get(term, ()):
                norm = 1 - BM25_B + BM25_B * self.lengths[key] / average
                scores[key] += weight * saturated(self.counts[key][term], norm)
        return scores

    def search(
        self,
        query: str,
        *,
        limit: int,
        include_superseded: bool = False,
        types: Sequence[str] = (),
    ) -> list[tuple[Observation, float]]:
        """Best first: observations matching the query (an id matches itself)."""
        scores = self.scores(query)
        if query.strip() in self.documents:
            scores[query.strip()] = math.inf
        kept = [
            (self.documents[key], score)
            for key, score in scores.items()
            if (include_superseded or self.documents[key].is_current)
            and (not types or self.documents[key].type in types)
        ]
        kept.sort(key=lambda pair: (-pair[1], -pair[0].updated_at.timestamp(), pair[0].id))
        return kept[:limit]

    def twin_of(self, draft: ObservationDraft, threshold: float) -> tuple[Observation, bool] | None:
        """A current observation of the draft's type saying the same: (it, whether exactly)."""
        digest = content_hash(draft.content)
        wanted = words_of(draft.title, draft.content)
        best: tuple[float, Observation] | None = None
        for key, observation in self.documents.items():
            if observation.type != draft.type or not observation.is_current:
                continue
            if self.hashes[key] == digest:
                return observation, True
            score = jaccard(wanted, self.words[key])
            if score >= threshold and (best is None or score > best[0]):
                best = (score, observation)
        return (best[1], False) if best else None


# -- duplicates and contradictions --------------------------------------------------------------
def normalized(text: str) -> str:
    """Lower case, single spaces."""
    return " ".join(text.lower().split())


def content_hash(content: str) -> str:
    """The identity of a content for exact-duplicate checks (case and spacing ignored)."""
    return hashlib.sha256(normalized(content).encode()).hexdigest()[:16]


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """Jaccard similarity of two term sets (0 … 1)."""
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


def similarity(first: str, second: str) -> float:
    """Jaccard similarity of the two texts' term sets (0 … 1)."""
    return jaccard(frozenset(terms(first)), frozenset(terms(second)))


def what_of(content: str) -> str:
    """The ``What:`` line of a content, else its first line."""
    match = WHAT.search(content)
    if match:
        return match["rest"].strip()
    return next((line.strip() for line in content.splitlines() if line.strip()), "")


def claim_of(title: str, content: str) -> str:
    """What an observation states, for contradiction checks: its title and its What."""
    return f"{title}. {what_of(content)}"[:CLAIM_MAX_CHARS]


def contradicted(draft: ObservationDraft, candidates: Iterable[Observation]) -> list[Observation]:
    """Current observations the draft contradicts (a decision reversed, a setting changed).

    On evidence only (a cue word, a rejected choice, new numbers for the same words): two notes
    that merely name other things ("Redis runs on port 6379 in dev", "Postgres runs on port
    5432 in dev") both stay.
    """
    if draft.type not in SUPERSEDING_TYPES:
        return []
    claim = claim_of(draft.title, draft.content)
    return [
        candidate
        for candidate in candidates
        if candidate.is_current
        and candidate.type in SUPERSEDING_TYPES
        and not (draft.topic_key and candidate.topic_key == draft.topic_key)
        and supersedes(claim_of(candidate.title, candidate.content), claim, cue=True)
    ]


def aged_progress(new: Observation, candidates: Iterable[Observation]) -> list[Observation]:
    """Older progress notes the new one replaces (only the latest progress stays current)."""
    if new.type != "progress":
        return []
    return [c for c in candidates if c.type == "progress" and c.is_current and c.id != new.id]


def summaries_over_cap(candidates: Iterable[Observation], cap: int) -> list[Observation]:
    """The oldest session summaries beyond ``cap`` (they are condensed, then forgotten)."""
    summaries = sorted(
        (c for c in candidates if c.type == "session_summary" and c.is_current),
        key=lambda c: (c.updated_at, c.id),
    )
    return summaries[: max(0, len(summaries) - cap)]


def condensed_line(summary: Observation) -> str:
    """One line that keeps the gist of a session summary being aged out."""
    title = summary.title.removeprefix("Session summary:").strip()
    accomplished = section_lines(summary.content, "Accomplished")[:2]
    done = f" — {'; '.join(accomplished)}" if accomplished else ""
    return truncate_utf8(f"- {summary.updated_at:%Y-%m-%d} {title}{done}", 400)


def condensed_content(previous: str, lines: Sequence[str], max_lines: int = 60) -> str:
    """The condensed-history content with new lines appended, the oldest dropped past the cap."""
    kept = [line for line in previous.splitlines() if line.startswith("- ")]
    merged = list(dict.fromkeys([*kept, *lines]))[-max_lines:]
    return "What: older sessions of this project, one line each\n" + "\n".join(merged)


def section_lines(content: str, heading: str) -> list[str]:
    """The ``- item`` lines under ``## <heading>`` of a summary."""
    lines: list[str] = []
    inside = False
    for line in content.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            inside = stripped.lstrip("#").strip().lower() == heading.lower()
            continue
        if inside and stripped.startswith(("- ", "* ")):
            lines.append(stripped[2:].strip())
    return lines


# -- files and rendering ------------------------------------------------------------------------
def files_in(content: str) -> tuple[str, ...]:
    """Paths named on the content's ``Where:`` lines."""
    found: list[str] = []
    for match in WHERE.finditer(content):
        for token in re.split(r"[\s,;`]+", match["rest"]):
            path = token.strip("()[]'\".:")
            if path and PATH_LIKE.match(path):
                found.append(path)
    return tuple(dict.fromkeys(found))


def snippet(observation: Observation, max_chars: int = SNIPPET_MAX_CHARS) -> str:
    """The first words of the content, on one line."""
    text = " ".join(observation.content.split())
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def listed_after_what(content: str) -> list[str]:
    """The ``- item`` lines right under the ``What:`` line (a seed's commands), in order."""
    match = WHAT.search(content)
    items: list[str] = []
    for line in content[match.end() :].splitlines()[1:] if match else []:
        item = line.strip()
        if not item.startswith(("- ", "* ")):
            break
        items.append(item[2:].strip())
    return items


def recall_text(observation: Observation) -> str:
    """How an observation reads in ``<persistent_memory>``: title and What, one line.

    A list right under the What is part of it (``What: the commands …`` then ``- make test``):
    the items follow it, so the model reads the commands and not only that there are some.
    """
    what = what_of(observation.content)
    items = listed_after_what(observation.content)
    if items:
        what = f"{what.rstrip(':')}: {'; '.join(items)}"
    if not what or what == observation.title:
        return " ".join(observation.title.split())
    return " ".join(f"{observation.title} — {what}".split())


# -- the drain ----------------------------------------------------------------------------------
def observation_thread(observation_id: str) -> str:
    """The root session an observation's revisions drain under."""
    return f"observation:{observation_id}"


def observation_event(observation: Observation) -> SessionEvent:
    """The event that carries one revision of an observation to the knowledge graph.

    Its session is the observation and its id the revision, so the episode uuid
    (:func:`plait.state.ports.episode_uuid`) is the same for the same revision: a drain retry
    writes nothing twice, and every revision is its own episode.
    """
    thread = observation_thread(observation.id)
    return SessionEvent(
        id=observation.revision,
        root_session_id=thread,
        session_id=observation.source.session_id or thread,
        kind=EVENT_KINDS.get(observation.type, EventKind.DISCOVERY),
        summary=f"[{observation.type}] {observation.title}",
        body=observation.content,
        refs=observation.files,
        keywords=tuple(k for k in (observation.type, observation.topic_key) if k),
        key=observation.topic_key or thread,
        source_hook=OBSERVATION_HOOK,
        time=observation.updated_at,
    )


__all__ = [
    "observation_thread",
    "ObservationIndex",
    "aged_progress",
    "claim_of",
    "condensed_content",
    "condensed_line",
    "content_hash",
    "contradicted",
    "files_in",
    "words_of",
    "jaccard",
    "normalized",
    "observation_event",
    "recall_text",
    "section_lines",
    "session_topic_key",
    "similarity",
    "slug",
    "snippet",
    "stem",
    "suggest_topic_key",
    "summaries_over_cap",
    "terms",
    "what_of",
]
