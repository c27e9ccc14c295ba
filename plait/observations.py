"""``Memory.observations``: explicit memory that agents and people save, correct and share.

Saving cleans first (``<private>`` spans stripped, secrets redacted), then upserts: the same
``topic_key`` (same project and scope) updates the observation and keeps the previous version as
a revision; without a topic key, an exact or near duplicate of the same type updates its twin.
After a save, hygiene runs: an older observation the new one contradicts is superseded (kept,
out of search by default), only the latest ``progress`` note stays current, and session
summaries past ``observations.summaries_kept`` are condensed into one line each. Each saved
revision goes onto the drain queue, so the knowledge graph learns it too; search reads the store
itself, so an observation is found the moment it is saved.

Project observations live in the project's group, personal ones in the user's group.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from plait.nodes.observations import (
    ObservationIndex,
    aged_progress,
    claim_of,
    condensed_content,
    condensed_line,
    content_hash,
    contradicted,
    files_in,
    observation_event,
    recall_text,
    section_lines,
    session_topic_key,
    suggest_topic_key,
    summaries_over_cap,
)
from plait.nodes.seeding import CI_FILES, FILE_MAX_BYTES, SEED_FILES, WORKFLOW_DIR, seeds_from
from plait.nodes.session_summary import (
    event_lines,
    is_worth_summarizing,
    project_events,
    render_sections,
    summarize_events,
    summary_title,
)
from plait.nodes.sessions import find_root
from plait.state.base.boundary import fail_open, fail_open_sync
from plait.state.base.errors import BackendError, UsageError
from plait.state.base.redact import redact, redact_data
from plait.state.base.settings import Settings
from plait.state.groups import acting_user, user_group_id
from plait.state.observations import (
    Observation,
    ObservationDraft,
    ObservationSource,
    ObservationStore,
    Scope,
    SummaryWriter,
    UnknownObservation,
    check_content,
    check_draft,
    check_files,
    check_title,
    check_topic_key,
    check_type,
    export_order,
    new_observation_id,
    observation_line,
    parse_observation_line,
    utc_now,
)
from plait.state.ports import DrainQueue, EventLog, MemoryHit, SessionLinks

if TYPE_CHECKING:
    from plait.wiring import Backends

logger = logging.getLogger("plait")

SaveAction = Literal["created", "updated", "unchanged", "duplicate", "merged"]
WRITE_TRIES = 5
SUMMARY_EVENTS_MAX = 2000
CONDENSED_TOPIC = "session/condensed-history"
BRIEF_TOPIC = "project/brief"
SEEDED_MARKER = "seeded"
SHARED_MARKER = "shared_file_sha256"
WORKFLOWS_MAX = 5
BRIEF_SCORE = 3.0
RECALL_SCORE_BASE = 2.0


@dataclass(frozen=True, kw_only=True, slots=True)
class SaveResult:
    """What a save did: the observation as stored and what became of older ones."""

    observation: Observation
    action: SaveAction
    superseded: tuple[str, ...] = ()


@dataclass(kw_only=True, slots=True)
class ImportReport:
    """What an import did, line by line."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "errors": self.errors,
        }


@dataclass(slots=True)
class _Snapshot:
    """A group's observations as of a store version, with their index (kept up to date)."""

    version: int
    index: ObservationIndex

    @property
    def observations(self) -> list[Observation]:
        """Oldest first."""
        return sorted(self.index.documents.values(), key=lambda o: (o.created_at, o.id))


# -- cleaning what comes in -----------------------------------------------------------------------
def cleaned(draft: ObservationDraft) -> ObservationDraft:
    """The draft with private spans stripped and secrets redacted, and its Where files added."""
    content = check_content(redact(draft.content))
    return replace_draft(
        draft,
        title=check_title(redact(draft.title)),
        content=content,
        files=check_files([redact(f) for f in (*draft.files, *files_in(content))]),
        data=redact_data(draft.data) if draft.data is not None else None,
    )


def replace_draft(draft: ObservationDraft, **changes: Any) -> ObservationDraft:
    """A copy of a frozen draft with some fields changed."""
    return draft.model_copy(update=changes)


def scrubbed(observation: Observation) -> Observation:
    """An observation (and its revisions) redacted again, for export or import."""
    revisions = tuple(
        r.model_copy(update={"title": redact(r.title), "content": redact(r.content)})
        for r in observation.revisions
    )
    return observation.model_copy(
        update={
            "title": redact(observation.title),
            "content": redact(observation.content),
            "revisions": revisions,
            "data": redact_data(observation.data) if observation.data is not None else None,
        }
    )


def same_version(observation: Observation, draft: ObservationDraft) -> bool:
    """Whether saving ``draft`` would change nothing."""
    return (
        observation.title == draft.title
        and observation.type == draft.type
        and content_hash(observation.content) == content_hash(draft.content)
        and observation.is_current
        and (draft.data is None or observation.data == draft.data)
    )


def keeps_revision(old: Observation, new_source: ObservationSource) -> bool:
    """Every earlier version is kept, except what plait wrote by itself replacing its own.

    An automatic session summary (or the condensed history) is rewritten from the events and
    holds everything its earlier versions held.
    """
    return not (old.source.name == "auto" and new_source.name == "auto")


def created(draft: ObservationDraft, now: datetime) -> Observation:
    """A new observation from a draft."""
    return Observation(id=new_observation_id(), created_at=now, updated_at=now, **dict(draft))


def revised(old: Observation, draft: ObservationDraft, now: datetime) -> Observation:
    """The next revision of ``old`` saying what ``draft`` says (the old one kept)."""
    revisions = old.revisions + ((old.as_revision(),) if keeps_revision(old, draft.source) else ())
    return old.model_copy(
        update={
            "type": draft.type,
            "title": draft.title,
            "content": draft.content,
            "topic_key": draft.topic_key or old.topic_key,
            "files": draft.files,
            "source": draft.source,
            "updated_at": now,
            "revision": old.revision + 1,
            "revisions": revisions,
            "superseded_by": "",
            "data": draft.data,
        }
    )


def drains(observation: Observation) -> bool:
    """Whether a revision goes to the knowledge graph.

    Seeds and automatic summaries do not: the project's files and the session's own events are
    there already.
    """
    if observation.source.kind == "seed":
        return False
    return not (observation.type == "session_summary" and observation.source.name == "auto")


def hit_of(observation: Observation, score: float, group_id: str) -> MemoryHit:
    """An observation as a recall hit (its type is the hit's kind)."""
    text = recall_text(observation)
    if observation.type == "session_summary":
        done = section_lines(observation.content, "Accomplished")[:1]
        text = observation.title + (f" — {done[0]}" if done else "")
    return MemoryHit(
        uuid=observation.id,
        kind=observation.type,
        text=text,
        score=score,
        valid_at=observation.updated_at,
        group_id=group_id,
    )


def read_seed_files(project_dir: Path) -> dict[str, str]:
    """The seed files present in the project (each cut at 64 KB), by relative path."""
    paths = [project_dir / name for name in (*SEED_FILES, *CI_FILES)]
    workflows = project_dir / WORKFLOW_DIR
    if workflows.is_dir():
        paths += sorted(workflows.glob("*.y*ml"))[:WORKFLOWS_MAX]
    found: dict[str, str] = {}
    for path in paths:
        if path.is_file():
            with path.open("rb") as handle:
                data = handle.read(FILE_MAX_BYTES)
            found[path.relative_to(project_dir).as_posix()] = data.decode("utf-8", "replace")
    return found


# -- the service ----------------------------------------------------------------------------------
# Why copies go: the observation was ``deleted``, ``edited`` (by a person, through
# :meth:`Observations.update`), or ``revised`` (a newer revision saved over it: a summary's).
CopiesGo = Literal["deleted", "edited", "revised"]
ForgetCopies = Callable[[Observation, range, CopiesGo], Awaitable[None]]


class ObservationsHot(EventLog, SessionLinks, DrainQueue, Protocol):
    """What observations need of the hot tier: session logs and links, and the drain queue."""


@dataclass(kw_only=True)
class Observations:
    """Observations of one project (and the user's personal ones) over the hot tier."""

    store: ObservationStore
    hot: ObservationsHot
    settings: Settings
    group_id: str
    project_dir: Path
    summary_writer: SummaryWriter | None = None
    clock: Callable[[], datetime] = utc_now
    # what removes the copies plait derived from an observation's revisions (the recall index,
    # the knowledge graph, caches, staged envelopes): (observation, revisions, withdraw queued)
    forget_copies: ForgetCopies | None = None
    _snapshots: dict[str, _Snapshot] = field(default_factory=dict)

    @property
    def user_group(self) -> str:
        """The group of personal observations: the acting user's.

        A team member's on a service a team shares, else this service's user.
        """
        graphiti = self.settings.graphiti
        return user_group_id(graphiti.group_id_prefix, acting_user(graphiti.resolved_user()))

    def group_of(self, scope: Scope) -> str:
        """The group a scope's observations live in."""
        return self.group_id if scope == "project" else self.user_group

    def groups(self, scope: Scope | None = None) -> list[tuple[Scope, str]]:
        """(scope, group) pairs: one scope's, or both."""
        pairs: list[tuple[Scope, str]] = [("project", self.group_id), ("personal", self.user_group)]
        return [pair for pair in pairs if scope is None or pair[0] == scope]

    # -- reading ----------------------------------------------------------------------------------
    async def snapshot(self, group_id: str) -> _Snapshot:
        """The group's observations and their search index, rebuilt when the store moved."""
        version = await self.store.observations_version(group_id)
        cached = self._snapshots.get(group_id)
        if cached is not None and cached.version == version:
            return cached
        listed = await self.store.list_observations(group_id)
        snapshot = _Snapshot(version, ObservationIndex.build(listed))
        self._snapshots[group_id] = snapshot
        return snapshot

    async def _put(self, group: str, observation: Observation, expected: int) -> bool:
        """Write through the store's compare-and-set, keeping this process's index current."""
        version = await self.store.put_observation(group, observation, expected_revision=expected)
        if version:
            self._moved(group, version, lambda index: index.add(observation))
        return bool(version)

    async def _delete(self, group: str, observation_id: str) -> bool:
        """Forget an observation in the store and in this process's index."""
        version = await self.store.delete_observation(group, observation_id)
        if version:
            self._moved(group, version, lambda index: index.remove(observation_id))
        return bool(version)

    def _moved(self, group: str, version: int, change: Callable[[ObservationIndex], None]) -> None:
        """Apply this process's own write to the cached index, or drop it if others wrote too."""
        cached = self._snapshots.get(group)
        if cached is not None and cached.version == version - 1:
            change(cached.index)
            cached.version = version
        else:
            self._snapshots.pop(group, None)

    async def listed(
        self, scope: Scope | None = None, *, current: bool = False
    ) -> list[Observation]:
        """Observations of one scope or both, oldest first (only current ones if asked)."""
        found: list[Observation] = []
        for _, group in self.groups(scope):
            found += (await self.snapshot(group)).observations
        found.sort(key=lambda o: (o.created_at, o.id))
        return [o for o in found if o.is_current] if current else found

    async def locate(self, observation_id: str) -> tuple[str, Observation]:
        """The group and observation of an id, or :class:`UnknownObservation`."""
        for _, group in self.groups():
            found = await self.store.get_observation(group, observation_id)
            if found is not None:
                return group, found
        raise UnknownObservation(observation_id)

    async def get(self, observation_id: str) -> Observation:
        """The observation with its revisions, or :class:`UnknownObservation`."""
        return (await self.locate(observation_id))[1]

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[str] = (),
        scope: Scope | None = None,
        include_superseded: bool = False,
    ) -> list[tuple[Observation, float]]:
        """Best matches in the store (both scopes unless one is named), best first."""
        found: list[tuple[Observation, float]] = []
        for _, group in self.groups(scope):
            index = (await self.snapshot(group)).index
            found += index.search(
                query, limit=limit, types=types, include_superseded=include_superseded
            )
        found.sort(key=lambda pair: (-pair[1], -pair[0].updated_at.timestamp()))
        return found[:limit]

    async def recall_hits(self, group_id: str, query: str, limit: int) -> list[MemoryHit]:
        """The project brief and the best matches for ``query`` (the cache refresh adds them)."""
        if group_id != self.group_id:
            return []
        wanted = min(limit, self.settings.observations.recall_limit)
        hits: list[MemoryHit] = []
        brief = await self.store.observation_for_topic(self.group_id, BRIEF_TOPIC)
        if brief is not None and brief.is_current:
            hits.append(hit_of(brief, BRIEF_SCORE, self.group_id))
        if wanted and query.strip():
            for observation, score in await self.search(query, limit=wanted):
                if brief is None or observation.id != brief.id:
                    scaled = RECALL_SCORE_BASE + score / (score + 1)
                    hits.append(hit_of(observation, scaled, self.group_of(observation.scope)))
        return hits

    # -- saving -----------------------------------------------------------------------------------
    async def save(self, draft: ObservationDraft) -> SaveResult:
        """Clean, upsert (topic key or twin), then hygiene and the drain; see the module."""
        draft = cleaned(draft)
        group = self.group_of(draft.scope)
        for _ in range(WRITE_TRIES):
            result = await self._try_save(group, draft)
            if result is not None:
                return await self._after_save(group, draft, result)
        raise BackendError(f"saving {draft.title!r}: other writes kept getting in the way")

    async def _try_save(self, group: str, draft: ObservationDraft) -> SaveResult | None:
        existing, action = await self._existing(group, draft)
        if existing is not None and (action == "duplicate" or same_version(existing, draft)):
            return SaveResult(
                observation=existing, action="unchanged" if draft.topic_key else action
            )
        now = self.clock()
        if existing is None:
            new, expected = created(draft, now), 0
        else:
            new, expected = revised(existing, draft, now), existing.revision
        if not await self._put(group, new, expected):
            return None
        return SaveResult(observation=new, action=action)

    async def _existing(
        self, group: str, draft: ObservationDraft
    ) -> tuple[Observation | None, SaveAction]:
        """What the draft updates: its topic's holder, else a twin of the same type."""
        if draft.topic_key:
            holder = await self.store.observation_for_topic(group, draft.topic_key)
            return holder, "created" if holder is None else "updated"
        index = (await self.snapshot(group)).index
        twin = index.twin_of(draft, self.settings.observations.near_duplicate)
        if twin is None:
            return None, "created"
        return twin[0], "duplicate" if twin[1] else "merged"

    async def _after_save(
        self, group: str, draft: ObservationDraft, result: SaveResult
    ) -> SaveResult:
        if result.action in ("unchanged", "duplicate"):
            return result
        new = result.observation
        index = (await self.snapshot(group)).index
        related = [o for o, _ in index.search(claim_of(draft.title, draft.content), limit=20)]
        progress = [o for o in index.documents.values() if o.type == "progress"]
        stale = [
            *contradicted(draft, [o for o in related if o.id != new.id]),
            *aged_progress(new, progress),
        ]
        superseded = [o.id for o in stale if await self._supersede(group, o, new.id)]
        if new.type == "session_summary":
            await self._condense_summaries(group)
        await self._drain(group, new)
        return replace(result, superseded=tuple(superseded))

    async def _drain(self, group: str, observation: Observation, why: CopiesGo = "revised") -> None:
        """Queue a saved revision for the knowledge graph, unless it is one that stays out.

        The revisions it replaces stop being recalled: their copies are removed.
        """
        if drains(observation):
            await self.hot.enqueue(group, [observation_event(observation)])
        if observation.revision > 1 and self.forget_copies is not None:
            await self.forget_copies(observation, range(1, observation.revision), why)

    async def _supersede(self, group: str, old: Observation, by: str) -> bool:
        """Mark ``old`` superseded by ``by`` (best effort: a concurrent write wins)."""
        marked = old.model_copy(update={"superseded_by": by})
        return await self._put(group, marked, old.revision)

    async def _condense_summaries(self, group: str) -> None:
        """Fold the oldest session summaries past the cap into one condensed history."""
        observations = (await self.snapshot(group)).observations
        aged = summaries_over_cap(observations, self.settings.observations.summaries_kept)
        if not aged:
            return
        holder = await self.store.observation_for_topic(group, CONDENSED_TOPIC)
        content = condensed_content(
            holder.content if holder else "", [condensed_line(s) for s in aged]
        )
        draft = ObservationDraft(
            title="Earlier sessions of this project",
            content=content,
            type="learning",
            topic_key=CONDENSED_TOPIC,
            source=ObservationSource(kind="session", name="auto"),
        )
        if (await self._try_save(group, draft)) is not None:
            for summary in aged:
                await self._delete(group, summary.id)

    async def update(
        self,
        observation_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        type: str | None = None,
        topic_key: str | None = None,
        source: ObservationSource | None = None,
    ) -> Observation:
        """Change an observation; the previous version is kept as a revision."""
        for _ in range(WRITE_TRIES):
            group, old = await self.locate(observation_id)
            draft = cleaned(
                check_draft(
                    title=old.title if title is None else title,
                    content=old.content if content is None else content,
                    type=old.type if type is None else type,
                    scope=old.scope,
                    topic_key=topic_key,
                    source=source or old.source,
                    data=old.data if content is None else None,
                )
            )
            if topic_key is None:  # kept as it is (a store's lg: key is plait's own)
                draft = replace_draft(draft, topic_key=old.topic_key)
            await self._check_topic_free(group, draft.topic_key, observation_id)
            new = revised(old, draft, self.clock())
            if await self._put(group, new, old.revision):
                await self._drain(group, new, "edited")
                return new
        raise BackendError(f"updating {observation_id!r}: other writes kept getting in the way")

    async def _check_topic_free(self, group: str, topic_key: str, owner: str) -> None:
        if not topic_key:
            return
        holder = await self.store.observation_for_topic(group, topic_key)
        if holder is not None and holder.id != owner:
            raise UsageError(f"topic_key: {topic_key!r} belongs to observation {holder.id!r}")

    async def delete(self, observation_id: str) -> Observation:
        """Forget an observation (an import will not bring it back); what it was.

        Every copy plait derived from it goes too (:attr:`forget_copies`): queued for the graph
        or drained, in the recall index, the knowledge graph, the caches and staged envelopes.
        """
        group, old = await self.locate(observation_id)
        if self.forget_copies is not None:  # first: should it fail, nothing is forgotten yet
            await self.forget_copies(old, range(1, old.revision + 1), "deleted")
        await self._delete(group, observation_id)
        return old

    # -- sessions ---------------------------------------------------------------------------------
    async def session_summary(
        self, session_id: str, content: str, *, title: str | None = None, source_name: str = ""
    ) -> SaveResult:
        """Save an agent's summary of its session; it replaces the automatic one."""
        root = await find_root(self.hot, session_id)
        goals = section_lines(content, "Goal") if isinstance(content, str) else []
        draft = check_draft(
            title=title or summary_title(goals, root),
            content=content,
            type="session_summary",
            topic_key=session_topic_key(root),
            source=ObservationSource(kind="session", name=source_name or "agent", session_id=root),
        )
        return await self.save(draft)

    async def summarize_session(self, root_session_id: str) -> Observation | None:
        """Write (or update) a session's summary from its event log; None when nothing is new.

        An agent's own summary is left as it is.
        """
        events = project_events(await self._recent_events(root_session_id))
        if not is_worth_summarizing(events):
            return None
        topic = session_topic_key(root_session_id)
        existing = await self.store.observation_for_topic(self.group_id, topic)
        if existing is not None and (
            existing.source.name != "auto" or existing.updated_at >= events[-1].time
        ):
            return None
        summary = summarize_events(events, root_session_id)
        content = await self._written_by_llm(summary.content, event_lines(events))
        draft = ObservationDraft(
            title=summary.title,
            content=content,
            type="session_summary",
            topic_key=topic,
            files=summary.files,
            source=ObservationSource(kind="session", name="auto", session_id=root_session_id),
        )
        return (await self.save(draft)).observation

    async def after_idle(self, root_session_id: str) -> None:
        """When a session went idle (or compacts): the shared file, then the session's summary."""
        await fail_open("importing the shared memory file", self.sync_shared_file(), None)
        if self.settings.observations.auto_summary:
            await self.summarize_session(root_session_id)

    async def _recent_events(self, root_session_id: str) -> list[Any]:
        count = await self.hot.event_count(root_session_id)
        after = max(0, count - SUMMARY_EVENTS_MAX)
        return await self.hot.read_events(root_session_id, after_id=after)

    async def _written_by_llm(self, draft: str, events: str) -> str:
        if self.summary_writer is None:
            return draft
        sections = await fail_open(
            "writing a session summary with the llm",
            self.summary_writer.write_summary(draft, events),
            {},
        )
        return render_sections(sections).strip() or draft

    async def context(self, *, sessions: int = 3, recent: int = 10) -> dict[str, Any]:
        """What the last sessions did and the latest observations, in brief."""
        current = await self.listed(current=True)
        newest = sorted(current, key=lambda o: o.updated_at, reverse=True)
        summaries = [o for o in newest if o.type == "session_summary"][:sessions]
        brief = next((o for o in current if o.topic_key == BRIEF_TOPIC), None)
        others = [o for o in newest if o.type != "session_summary" and o is not brief][:recent]
        return {
            "brief": recall_text(brief) if brief else None,
            "sessions": [session_line(o) for o in summaries],
            "recent": [listing(o) for o in others],
        }

    async def timeline(
        self, observation_id: str | None = None, *, limit: int = 10
    ) -> dict[str, Any]:
        """Observations saved around one (before and after it), or the latest ones."""
        ordered = await self.listed()
        if observation_id is None:
            return {"anchor": None, "before": [listing(o) for o in ordered[-limit:]], "after": []}
        anchor = await self.get(observation_id)
        position = next(i for i, o in enumerate(ordered) if o.id == anchor.id)
        half = max(1, limit // 2)
        return {
            "anchor": listing(anchor),
            "before": [listing(o) for o in ordered[max(0, position - half) : position]],
            "after": [listing(o) for o in ordered[position + 1 : position + 1 + half]],
        }

    async def stats(self) -> dict[str, Any]:
        """Counts by scope and type, superseded, revisions, what waits for the drain."""
        everything = await self.listed()
        current = [o for o in everything if o.is_current]
        last = max((o.updated_at for o in everything), default=None)
        return {
            "observations": len(current),
            "by_scope": dict(Counter(o.scope for o in current)),
            "by_type": dict(sorted(Counter(o.type for o in current).items())),
            "superseded": len(everything) - len(current),
            "revisions": sum(len(o.revisions) for o in everything),
            "sessions_summarized": sum(o.type == "session_summary" for o in current),
            "last_saved": last.isoformat() if last else None,
            "queued_for_graph": await self.hot.queue_depth(),
        }

    async def suggest_topic_key(self, title: str, type: str | None) -> dict[str, Any]:
        """A stable topic key for a title and type, and the observation holding it, if any."""
        checked = check_type(type or "learning")
        key = check_topic_key(suggest_topic_key(check_title(title), checked))
        holders = [await self.store.observation_for_topic(g, key) for _, g in self.groups()]
        holder = next((h for h in holders if h is not None), None)
        return {"topic_key": key, "id": holder.id if holder else None}

    # -- export, import, seeding ------------------------------------------------------------------
    async def export_lines(self, scope: Scope | None = None) -> list[str]:
        """Every observation of the scope (or both) as JSONL lines, stable and sorted."""
        return [observation_line(scrubbed(o)) for o in export_order(await self.listed(scope))]

    async def import_lines(self, lines: Iterable[str]) -> ImportReport:
        """Import exported lines: new ids added, newer revisions applied, broken lines named.

        Importing the same lines twice changes nothing; forgotten ids stay forgotten.
        """
        report = ImportReport()
        parsed: list[tuple[int, Observation]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                parsed.append((number, scrubbed(parse_observation_line(line, number))))
            except UsageError as error:
                report.errors.append(str(error))
        imported = {observation.id for _, observation in parsed}
        for number, incoming in parsed:
            try:
                await self._check_successor(incoming, imported, number)
                await self._import_one(incoming, report)
            except UsageError as error:
                report.errors.append(str(error))
        return report

    async def _check_successor(
        self, incoming: Observation, imported: set[str], number: int
    ) -> None:
        """An import may name a successor only if it is in the import or already here."""
        successor = incoming.superseded_by
        if not successor or successor in imported:
            return
        if await self.store.get_observation(self.group_of(incoming.scope), successor) is None:
            raise UsageError(
                f"line {number}: superseded_by {successor!r} names no observation in the import "
                "or here; not imported"
            )

    async def _import_one(self, incoming: Observation, report: ImportReport) -> None:
        group = self.group_of(incoming.scope)
        if await self.store.is_forgotten(group, incoming.id):
            report.skipped += 1
            return
        existing = await self.store.get_observation(group, incoming.id)
        if existing is not None and existing.revision >= incoming.revision:
            report.unchanged += 1
            return
        expected = existing.revision if existing else 0
        if not await self._put(group, incoming, expected):
            raise UsageError(
                f"observation {incoming.id!r}: its topic_key {incoming.topic_key!r} is held by "
                "another observation here (or it changed meanwhile); not imported"
            )
        if existing is None:
            report.added += 1
        else:
            report.updated += 1
        await self._drain(group, incoming)

    async def sync_shared_file(self) -> ImportReport | None:
        """Import the project's shared memory file when its content changed since last time."""
        name = self.settings.observations.share_file
        path = self.project_dir / name if name else None
        if path is None or not path.is_file():
            return None
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if await self.store.get_marker(self.group_id, SHARED_MARKER) == digest:
            return None
        report = await self.import_lines(data.decode("utf-8", "replace").splitlines())
        await self.store.set_marker(self.group_id, SHARED_MARKER, digest)
        for error in report.errors:
            logger.warning("plait: %s: %s", name, error)
        return report

    async def seed(self) -> list[Observation]:
        """Seed a project without memory from its files (once); the observations made."""
        if await self.store.get_marker(self.group_id, SEEDED_MARKER) is not None:
            return []
        if (await self.snapshot(self.group_id)).observations:
            await self.store.set_marker(self.group_id, SEEDED_MARKER, "had memory")
            return []
        files = read_seed_files(self.project_dir)
        made = []
        for seed in seeds_from(files, self.project_dir.name):
            source = ObservationSource(kind="seed", name=", ".join(seed.files))
            draft = check_draft(**asdict(seed), source=source)
            made.append((await self.save(draft)).observation)
        await self.store.set_marker(self.group_id, SEEDED_MARKER, self.clock().isoformat())
        return made

    async def on_open(self) -> None:
        """At start: import the shared memory file if it changed, then seed if still empty."""
        await self.sync_shared_file()
        if self.settings.observations.seed:
            await self.seed()


def summary_writer_for(settings: Settings) -> SummaryWriter | None:
    """The LLM summary writer when ``observations.llm_summary`` is on and an LLM is configured."""
    if not settings.observations.llm_summary or settings.llm.resolved() == "offline":
        return None
    from plait.adapters.backends.summary_llm import llm_summary_writer

    return llm_summary_writer(settings)


def open_observations(backends: Backends, *, group_id: str, project_dir: Path) -> Observations:
    """The project's observations on the hot tier's server (in memory when it runs degraded)."""
    from plait.adapters.backends.observations_memory import InMemoryObservationStore
    from plait.adapters.backends.observations_redis import RedisObservationStore

    store: ObservationStore = (
        InMemoryObservationStore()
        if backends.redis is None
        else RedisObservationStore(backends.redis)
    )
    writer = fail_open_sync(
        "the llm summary writer", lambda: summary_writer_for(backends.settings), None
    )
    return Observations(
        store=store,
        hot=backends.store,
        settings=backends.settings,
        group_id=group_id,
        project_dir=project_dir,
        summary_writer=writer,
    )


def listing(observation: Observation) -> dict[str, Any]:
    """An observation in one short entry: id, type, scope, title, topic key, time."""
    entry: dict[str, Any] = {
        "id": observation.id,
        "type": observation.type,
        "scope": observation.scope,
        "title": observation.title,
        "updated_at": observation.updated_at.isoformat(timespec="seconds"),
    }
    if observation.topic_key:
        entry["topic_key"] = observation.topic_key
    if observation.superseded_by:
        entry["superseded_by"] = observation.superseded_by
    return entry


def session_line(summary: Observation) -> dict[str, Any]:
    """A session summary in brief: what was done and what comes next."""
    return {
        **listing(summary),
        "accomplished": section_lines(summary.content, "Accomplished")[:3],
        "next_steps": section_lines(summary.content, "Next Steps")[:3],
    }


__all__ = [
    "CopiesGo",
    "ImportReport",
    "Observations",
    "SaveResult",
    "cleaned",
    "listing",
    "open_observations",
    "read_seed_files",
    "scrubbed",
    "session_line",
]
