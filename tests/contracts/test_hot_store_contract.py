"""One contract suite, run over every HotStore: Redis (embedded FalkorDB) and in-memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from support.backends import BACKENDS, backend_url

from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.adapters.backends.redis_store import RedisHotStore
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import ENVELOPES_KEPT, HotStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, key_prefix: str) -> AsyncIterator[HotStore]:
    url = backend_url(request)
    hot: HotStore = RedisHotStore.from_url(url, prefix=key_prefix) if url else InMemoryHotStore()
    yield hot
    await hot.aclose()


def event(
    summary: str, kind: EventKind = EventKind.DECISION, session: str = "root"
) -> SessionEvent:
    return SessionEvent(root_session_id=session, session_id=session, kind=kind, summary=summary)


def test_both_implementations_satisfy_the_protocol() -> None:
    assert isinstance(InMemoryHotStore(), HotStore)
    assert isinstance(RedisHotStore.from_url("redis://127.0.0.1:1"), HotStore)


async def test_hot_store_assigns_monotonic_ids_and_reads_ranges(store: HotStore) -> None:
    first = await store.append_events("root", [event("a"), event("b")])
    second = await store.append_events("root", [event("c")])
    assert [e.id for e in first + second] == [1, 2, 3]
    assert await store.event_count("root") == 3
    after = await store.read_events("root", after_id=1)
    assert [e.summary for e in after] == ["b", "c"]
    assert [e.id for e in after] == [2, 3]
    limited = await store.read_events("root", after_id=0, limit=2)
    assert [e.summary for e in limited] == ["a", "b"]
    assert await store.read_events("other") == []


async def test_hot_store_keeps_sessions_apart(store: HotStore) -> None:
    await store.append_events("one", [event("x", session="one")])
    await store.append_events("two", [event("y", session="two"), event("z", session="two")])
    assert await store.event_count("one") == 1
    assert [e.summary for e in await store.read_events("two")] == ["y", "z"]


async def test_hot_store_lists_a_groups_sessions_newest_first(store: HotStore) -> None:
    await store.append_events("one", [event("x", session="one")], enqueue_group="g1")
    await store.append_events("two", [event("y", session="two")], enqueue_group="g1")
    child = SessionEvent(
        root_session_id="one", session_id="child", kind=EventKind.DECISION, summary="t"
    )
    await store.append_events("one", [child], enqueue_group="g1")
    await store.append_events("elsewhere", [event("z", session="elsewhere")], enqueue_group="g2")
    await store.append_events("unqueued", [event("w", session="unqueued")])
    listed = await store.list_sessions("g1")
    assert {s.session_id for s in listed} == {"one", "two"}
    assert listed[0].session_id == "one" or listed[0].last_seen == listed[1].last_seen
    assert await store.count_sessions("g1") == 2
    assert len(await store.list_sessions("g1", offset=1, limit=5)) == 1
    assert {s.session_id for s in await store.session_members("one")} == {"one", "child"}
    assert await store.session_members("nobody") == []


async def test_hot_store_keeps_the_newest_received_envelopes(store: HotStore) -> None:
    assert await store.received_envelopes("root") == []
    for number in range(ENVELOPES_KEPT + 5):
        await store.log_envelope("root", f"<session_memory>{number}", "model call")
    await store.log_envelope("root", "<session_memory>last", "compaction")
    received = await store.received_envelopes("root")
    assert len(received) == ENVELOPES_KEPT
    assert (received[0].envelope, received[0].receiver) == ("<session_memory>last", "compaction")
    assert received[1].envelope == f"<session_memory>{ENVELOPES_KEPT + 4}"
    assert await store.received_envelopes("other") == []


async def test_hot_store_take_envelope_is_fresh_once(store: HotStore) -> None:
    assert await store.take_envelope("root") == (None, False)
    await store.stage_envelope("root", "<session_memory/>")
    assert await store.take_envelope("root") == ("<session_memory/>", True)
    assert await store.take_envelope("root") == ("<session_memory/>", False)
    await store.stage_envelope("root", "<session_memory>2</session_memory>")
    assert await store.take_envelope("root") == ("<session_memory>2</session_memory>", True)


async def test_hot_store_take_envelope_logs_what_the_receiver_got(store: HotStore) -> None:
    assert await store.take_envelope("root", receiver="model call") == (None, False)
    assert await store.received_envelopes("root") == []  # nothing taken, nothing logged
    await store.stage_envelope("root", '<session_memory>"tabs" \\ é</session_memory>')
    await store.take_envelope("root")
    assert await store.received_envelopes("root") == []  # no receiver, no record
    for _ in range(ENVELOPES_KEPT + 2):
        taken = await store.take_envelope("root", receiver="model call")
    received = await store.received_envelopes("root")
    assert len(received) == ENVELOPES_KEPT
    assert taken == ('<session_memory>"tabs" \\ é</session_memory>', False)
    assert (received[0].envelope, received[0].receiver) == (taken[0], "model call")
    assert abs((datetime.now(UTC) - received[0].at).total_seconds()) < 60


async def test_hot_store_append_can_enqueue_atomically(store: HotStore) -> None:
    await store.append_events("root", [event("a")])
    stored = await store.append_events("root", [event("b"), event("c")], enqueue_group="g9")
    claimed = await store.claim("w", count=10)
    assert [(c.group_id, c.event.id, c.event.summary) for c in claimed] == [
        ("g9", 2, "b"),
        ("g9", 3, "c"),
    ]
    assert [e.id for e in stored] == [2, 3]


async def test_hot_store_cache_round_trip(store: HotStore) -> None:
    assert await store.get_cache("q") is None
    await store.put_cache("q", "facts", ttl_seconds=60)
    assert await store.get_cache("q") == "facts"


async def test_hot_store_drops_cached_values(store: HotStore) -> None:
    await store.put_cache("a", "facts", ttl_seconds=60)
    await store.put_cache("b", "more", ttl_seconds=60)
    await store.drop_cache(["a", "missing"])
    assert (await store.get_cache("a"), await store.get_cache("b")) == (None, "more")


async def test_hot_store_withdraws_one_roots_queued_events_claimed_or_not(store: HotStore) -> None:
    await store.enqueue("g1", [event("a", session="obs"), event("b"), event("c", session="obs")])
    claimed = await store.claim("w1", count=1)
    assert claimed[0].event.summary == "a"
    assert await store.withdraw("obs") == 2
    assert await store.queue_depth() == 1
    assert [e.event.summary for e in await store.claim("w2", count=10, min_idle_ms=0)] == ["b"]
    assert await store.withdraw("obs") == 0


async def test_in_memory_cache_expires() -> None:
    clock = FakeClock()
    store = InMemoryHotStore(clock=clock)
    await store.put_cache("q", "facts", ttl_seconds=10)
    clock.now += 11
    assert await store.get_cache("q") is None


async def test_redis_cache_has_ttl(redis_url: str, key_prefix: str, sync_redis) -> None:
    store = RedisHotStore.from_url(redis_url, prefix=key_prefix, session_ttl_seconds=120)
    await store.put_cache("q", "facts", ttl_seconds=30)
    await store.append_events("root", [event("a")])
    assert 0 < sync_redis.ttl(f"{key_prefix}cache:q") <= 30
    assert 0 < sync_redis.ttl(f"{key_prefix}s:root:events") <= 120
    await store.claim_session("root", "alice")
    assert 0 < sync_redis.ttl(f"{key_prefix}s:root:owner") <= 120
    await store.aclose()


async def test_hot_store_parent_registry(store: HotStore) -> None:
    await store.set_parent("child", "root")
    assert await store.get_parent("child") == "root"
    await store.append_events("root", [event("kept")])
    await store.forget_session("child")
    assert await store.get_parent("child") is None
    assert await store.event_count("root") == 1


async def test_hot_store_binds_a_session_to_its_first_claimant(store: HotStore) -> None:
    assert await store.claim_session("root", "alice") == "alice"
    assert await store.claim_session("root", "bob") == "alice"
    assert await store.claim_session("root", "alice") == "alice"
    assert await store.claim_session("other", "") == ""
    assert await store.claim_session("other", "bob") == ""


async def test_a_session_binding_expires_with_the_session() -> None:
    clock = FakeClock()
    store = InMemoryHotStore(clock=clock, session_ttl_seconds=60)
    await store.claim_session("root", "alice")
    clock.now += 59
    assert await store.claim_session("root", "bob") == "alice"  # renewed by the claim
    clock.now += 59
    assert await store.claim_session("root", "bob") == "alice"
    clock.now += 61
    assert await store.claim_session("root", "bob") == "bob"


async def test_hot_store_queue_claim_ack(store: HotStore) -> None:
    await store.enqueue("g1", [event("a"), event("b"), event("c")])
    assert await store.queue_depth() == 3
    claimed = await store.claim("w1", count=2)
    assert [e.event.summary for e in claimed] == ["a", "b"]
    assert all(e.group_id == "g1" and e.deliveries == 1 for e in claimed)
    other = await store.claim("w2", count=10)
    assert [e.event.summary for e in other] == ["c"]
    await store.ack(claimed + other)
    assert await store.queue_depth() == 0
    assert await store.claim("w1", count=10) == []


async def test_hot_store_reclaims_entries_of_a_dead_consumer(store: HotStore) -> None:
    await store.enqueue("g1", [event("a")])
    first = await store.claim("dead-worker", count=1)
    assert await store.claim("w2", count=1, min_idle_ms=60_000) == []
    again = await store.claim("w2", count=1, min_idle_ms=0)
    assert [e.entry_id for e in again] == [first[0].entry_id]
    assert again[0].deliveries == 2
    await store.ack(again)
    assert await store.queue_depth() == 0


async def test_hot_store_dead_letters_list_replay_drop(store: HotStore) -> None:
    await store.enqueue("g1", [event("bad"), event("worse")])
    claimed = await store.claim("w1", count=2)
    for entry in claimed:
        await store.dead_letter(entry, reason="LLM returned invalid JSON")
    assert await store.queue_depth() == 0
    dead = await store.list_dead()
    assert [d.event.summary for d in dead] == ["bad", "worse"]
    assert dead[0].reason == "LLM returned invalid JSON" and dead[0].attempts == 1
    assert await store.replay_dead([dead[0].dead_id]) == 1
    assert [e.event.summary for e in await store.claim("w1", count=5)] == ["bad"]
    assert await store.drop_dead() == 1
    assert await store.list_dead() == []


async def test_hot_store_claim_returns_own_unacked_entries_first(store: HotStore) -> None:
    await store.enqueue("g1", [event("a"), event("b")])
    first = await store.claim("w1", count=1)
    again = await store.claim("w1", count=2)
    assert [e.event.summary for e in again] == ["a", "b"]
    assert again[0].entry_id == first[0].entry_id and again[0].deliveries == 2


async def test_oldest_queued_is_the_first_event_waiting(store: HotStore) -> None:
    assert await store.oldest_queued() is None
    early, late = (
        SessionEvent(
            root_session_id="r", session_id="r", kind=EventKind.DECISION, summary=text, time=when
        )
        for text, when in (
            ("early", datetime(2020, 1, 1, tzinfo=UTC)),
            ("late", datetime(2021, 1, 1, tzinfo=UTC)),
        )
    )
    await store.enqueue("g", [early, late])
    assert await store.oldest_queued() == datetime(2020, 1, 1, tzinfo=UTC)


async def test_hot_store_appends_a_call_once(store: HotStore) -> None:
    first = await store.append_events(
        "root", [event("a"), event("b")], enqueue_group="g", call_id="c1"
    )
    again = await store.append_events(
        "root", [event("a"), event("b")], enqueue_group="g", call_id="c1"
    )
    other_root = await store.append_events("other", [event("a", session="other")], call_id="c1")
    plain = await store.append_events("root", [event("c")], enqueue_group="g")
    assert [e.id for e in first] == [1, 2] and again == []
    assert [e.id for e in other_root] == [1] and [e.id for e in plain] == [3]
    assert [e.summary for e in await store.read_events("root")] == ["a", "b", "c"]
    assert [c.event.summary for c in await store.claim("w", count=10)] == ["a", "b", "c"]


async def test_hot_store_forgets_events_in_place_and_withdraws_only_them(store: HotStore) -> None:
    stored = await store.append_events(
        "root", [event("keep a"), event("forget me"), event("keep b")], enqueue_group="g"
    )
    assert await store.withdraw("root", [stored[1].id]) == 1
    queued = [entry.event.summary for entry in await store.peek(["g"], 10)]
    assert queued == ["keep a", "keep b"]
    assert await store.forget_events("root", [stored[1].id, 99]) == 1
    after = await store.read_events("root")
    assert [e.id for e in after] == [1, 2, 3]  # ids stay
    assert [e.summary for e in after] == ["keep a", "(forgotten)", "keep b"]
    assert after[1].body == "" and after[1].kind is EventKind.MESSAGE


async def test_hot_store_peeks_only_what_was_queued_after_an_entry(store: HotStore) -> None:
    await store.append_events("root", [event("a"), event("b")], enqueue_group="g")
    first = await store.peek(["g"], 10)
    assert [e.event.summary for e in first] == ["a", "b"]
    assert await store.peek(["g"], 10, after=first[-1].entry_id) == []
    await store.append_events("root", [event("c")], enqueue_group="g")
    later = await store.peek(["g"], 10, after=first[-1].entry_id)
    assert [e.event.summary for e in later] == ["c"]
    assert [e.event.summary for e in await store.peek(["g"], 2, after=first[0].entry_id)] == [
        "b",
        "c",
    ]


async def test_hot_store_forgets_what_model_calls_received(store: HotStore) -> None:
    await store.log_envelope("root", "<session_memory>secret plan</session_memory>", "opencode")
    await store.forget_received("root")
    assert await store.received_envelopes("root") == []
