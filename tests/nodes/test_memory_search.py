"""A search indexes what is still queued, reading each queued entry once per process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.nodes.capture import capture
from plait.nodes.memory_search import index_queued, search_memory
from plait.state.base.settings import Settings
from plait.state.context import PlaitContext
from plait.state.events import EventKind, SessionEvent
from plait.state.intents import AssistantText, SessionRef, UserTurn
from plait.state.ports import QueueEntry, episode_uuid

GROUP = "plait-search-0000aaaa"


class CountingStore(InMemoryHotStore):
    """The in-memory hot store, counting the queued entries each peek reads."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[int] = []

    async def peek(
        self, group_ids: Sequence[str], limit: int, after: str | None = None
    ) -> list[QueueEntry]:
        entries = await super().peek(group_ids, limit, after)
        self.read.append(len(entries))
        return entries


def searched(store: InMemoryHotStore, tmp_path: Path) -> PlaitContext:
    """A context whose search indexes ``store``'s queue into an in-memory recall index."""
    settings = Settings.load(tmp_path, data_dir=tmp_path / "data")
    return PlaitContext.over(store, settings=settings, group_id=GROUP, recall=InMemoryRecallIndex())


def decision(text: str) -> SessionEvent:
    return SessionEvent(root_session_id="s", session_id="s", kind=EventKind.DECISION, summary=text)


async def test_each_search_reads_only_what_was_queued_since_the_last(tmp_path: Path) -> None:
    store = CountingStore()
    context = searched(store, tmp_path)
    await store.append_events(
        "s", [decision("Use uv"), decision("Ship on Fridays")], enqueue_group=GROUP
    )
    assert await index_queued(context, [GROUP]) == 2
    assert await index_queued(context, [GROUP]) == 0
    await store.append_events("s", [decision("Keep invoices in Postgres")], enqueue_group=GROUP)
    hits = await search_memory(context, "invoices Postgres", [GROUP], 5)
    assert hits and "Postgres" in hits[0].text  # found before any drain
    assert store.read == [2, 0, 1]  # each queued entry read once


async def test_a_decision_found_by_search_names_the_prompt_it_was_read_from(
    tmp_path: Path,
) -> None:
    store = InMemoryHotStore()
    context = searched(store, tmp_path)
    said = "Let's keep the export cache in Redis. Never log the API tokens."
    session = SessionRef(session_id="s", root_session_id="s")
    events = capture([UserTurn(text=said)], session).events
    assert [e.kind for e in events][:2] == [EventKind.PROMPT, EventKind.DECISION]
    stored = await store.append_events("s", events, enqueue_group=GROUP)
    prompt, fact = (episode_uuid(GROUP, event) for event in stored[:2])
    hits = await search_memory(context, "where does the export cache live", [GROUP], 5)
    by_uuid = {hit.uuid: hit for hit in hits}
    assert by_uuid[fact].kind == "decision"
    assert by_uuid[fact].episodes == (fact, prompt)  # a hit on the fact points to its turn
    assert by_uuid[prompt].episodes == (prompt,)


async def test_what_the_assistant_said_is_found_and_its_decision_names_the_reply(
    tmp_path: Path,
) -> None:
    """A finished reply is a turn of the index: "which fix did you suggest?" finds it."""
    store = InMemoryHotStore()
    context = searched(store, tmp_path)
    session = SessionRef(session_id="s", root_session_id="s")
    asked = capture([UserTurn(text="Why do the invoice exports time out?")], session).events
    reply = (
        "The root cause was a separate query per invoice row for its customer. I switched "
        "the invoice query to select_related, so it runs one join."
    )
    answered = capture([AssistantText(text=reply)], session).events
    assert answered[0].kind is EventKind.MESSAGE
    stored = await store.append_events("s", [*asked, *answered], enqueue_group=GROUP)
    message = next(e for e in stored if e.kind is EventKind.MESSAGE)
    hits = await search_memory(
        context, "what fix did you make for the slow invoice exports", [GROUP], 5
    )
    assert episode_uuid(GROUP, message) in {hit.uuid for hit in hits}
    facts = [e for e in stored[len(asked) :] if e.kind is not EventKind.MESSAGE]
    assert {fact.kind for fact in facts} == {EventKind.DISCOVERY, EventKind.DECISION}
    for fact in facts:  # what capture read out of the reply points to it
        hit = next(h for h in hits if h.uuid == episode_uuid(GROUP, fact))
        assert hit.episodes == (hit.uuid, episode_uuid(GROUP, message))
