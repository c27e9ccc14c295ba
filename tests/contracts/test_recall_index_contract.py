"""One contract suite, run over every RecallIndex: the SQLite file and the in-memory twin."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from plait.adapters.backends.embedders import WordLlamaEmbedder
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.adapters.backends.recall_index import SqliteRecallIndex
from plait.state.recall import IndexedTurn, RecallIndex

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
MODEL = "test-model"


def turn(
    n: int, text: str, *, group: str = "shop", session: str = "s1", **rest: str
) -> IndexedTurn:
    return IndexedTurn(
        id=f"{group}-{session}-{n}",
        group_id=group,
        session=session,
        seq=n,
        said_at=START + timedelta(minutes=n),
        kind=rest.get("kind", "discovery"),
        key=rest.get("key", ""),
        text=text,
    )


CONVERSATION = [
    turn(1, "Which database should the orders service use?", kind="prompt"),
    turn(2, "PostgreSQL, with the pool from psycopg."),
    turn(3, "Never call the payment API from unit tests", kind="rule", key="tests"),
    turn(4, "The invoice export writes CSV files"),
]


@pytest.fixture(params=["sqlite", "memory"])
async def index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RecallIndex]:
    made: RecallIndex
    if request.param == "sqlite":
        made = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    else:
        made = InMemoryRecallIndex(vector_model=MODEL)
    yield made
    await made.aclose()


@pytest.fixture(params=["sqlite", "memory"])
async def staged_index(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[RecallIndex]:
    """An index with the real first stage (WordLlama), before any vector of the test model."""
    made: RecallIndex
    if request.param == "sqlite":
        made = SqliteRecallIndex.in_data_dir(
            tmp_path, vector_model=MODEL, first_stage=WordLlamaEmbedder()
        )
    else:
        made = InMemoryRecallIndex(vector_model=MODEL, first_stage=WordLlamaEmbedder())
    yield made
    await made.aclose()


INVOICES = [
    turn(1, "The invoice export writes CSV files", session="s1"),
    turn(1, "The invoice email goes out every Monday morning", session="s2"),
]
ANY_QUERY_VECTOR = np.array([1.0, 0.0], np.float32)  # the test model's: no turn has one yet


async def test_recall_index_satisfies_the_protocol(index: RecallIndex) -> None:
    assert isinstance(index, RecallIndex)


async def test_recall_index_adds_each_turn_once(index: RecallIndex) -> None:
    assert await index.add_turns(CONVERSATION) == 4
    assert await index.add_turns(CONVERSATION[:2]) == 0
    stats = await index.stats()
    assert (stats.turns, stats.groups) == (4, 1)


async def test_recall_index_finds_a_reply_through_the_turn_it_answers(index: RecallIndex) -> None:
    await index.add_turns(CONVERSATION)
    hits = await index.search_turns("which database for orders?", ["shop"], 10)
    ids = [hit.turn.id for hit in hits]
    assert ids[:2] == ["shop-s1-1", "shop-s1-2"]  # the answer has none of the question's words
    assert await index.search_turns("zebra xylophone", ["shop"], 10) == []
    assert await index.search_turns("database", ["elsewhere"], 10) == []


async def test_recall_index_keeps_groups_apart(index: RecallIndex) -> None:
    await index.add_turns([*CONVERSATION, turn(1, "database sharding plan", group="other")])
    only_shop = await index.search_turns("database", ["shop"], 10)
    both = await index.search_turns("database", ["shop", "other"], 10)
    assert {hit.turn.group_id for hit in only_shop} == {"shop"}
    assert {hit.turn.group_id for hit in both} == {"shop", "other"}


async def test_recall_index_lifts_turns_said_in_the_named_period(index: RecallIndex) -> None:
    early = turn(1, "we planned the release", session="a")
    late = replace(early, id="late", session="b", said_at=START.replace(month=9))
    await index.add_turns([early, late])
    hits = await index.search_turns("what did we plan in September?", ["shop"], 10)
    assert [hit.turn.id for hit in hits][0] == "late"


async def test_recall_index_newer_decision_with_the_same_key_replaces_the_older(
    index: RecallIndex,
) -> None:
    old = turn(1, "Use SQLite for the export cache", kind="decision", key="topic:export")
    new = turn(5, "Use Redis for the export cache", kind="decision", key="topic:export")
    await index.add_turns([new, old])
    hits = {hit.turn.id: hit for hit in await index.search_turns("export cache", ["shop"], 10)}
    assert hits[old.id].replaced_at == new.said_at and hits[new.id].replaced_at is None
    newest = await index.newest_turns(["shop"], ["decision", "rule"], 10)
    assert [hit.turn.id for hit in newest] == [new.id]


async def test_recall_index_embeds_each_turn_once_and_drops_stale_vectors(
    index: RecallIndex,
) -> None:
    await index.add_turns(CONVERSATION[:2])
    jobs = await index.pending_embeddings(100)
    assert [(job.view, job.text) for job in jobs] == [("turn", t.text) for t in CONVERSATION[:2]]
    vectors = np.eye(len(jobs), 8, dtype=np.float32)
    assert await index.store_vectors(jobs, vectors) == len(jobs)
    assert await index.pending_embeddings(100) == []
    await index.add_turns(CONVERSATION[2:3])  # a neighbour arriving changes no vector
    assert [job.turn_id for job in await index.pending_embeddings(100)] == ["shop-s1-3"]
    await index.forget_turns(["shop-s1-2"])  # a vector of a turn gone meanwhile is dropped
    assert await index.store_vectors(jobs[1:], np.ones((1, 8), np.float32)) == 0


async def test_recall_index_ranks_by_vectors_when_the_query_has_one(index: RecallIndex) -> None:
    await index.add_turns(CONVERSATION)
    jobs = await index.pending_embeddings(100)
    wanted = {"shop-s1-4"}  # the export turn points where the query does
    vectors = np.array(
        [[1.0, 0.0] if j.turn_id in wanted else [0.0, 1.0] for j in jobs], np.float32
    )
    await index.store_vectors(jobs, vectors)
    query = np.array([1.0, 0.0], np.float32)
    hits = await index.search_turns("orders export", ["shop"], 10, query_vector=query)
    assert hits[0].turn.id == "shop-s1-4"


async def test_a_long_turns_every_passage_is_embedded_and_speaks_for_it(
    index: RecallIndex,
) -> None:
    """The embedder reads a text's first ~512 tokens: a long turn is embedded passage by
    passage too, and the passage near its end ranks it (nothing of it is cut)."""
    filler = "The quarterly planning notes go on about the roadmap and the hiring. " * 60
    long = turn(5, filler + "Finally: the nightly export moves to the Kafka topic ledger-out.")
    await index.add_turns([*CONVERSATION, long])
    jobs = await index.pending_embeddings(100)
    parts = [j for j in jobs if j.turn_id == "shop-s1-5"]
    assert len(parts) >= 3 and all(j.view.startswith("part:") for j in parts)
    assert "Kafka topic ledger-out" in parts[-1].text
    assert all(len(j.text) <= 1200 for j in parts)
    vectors = np.array([[1.0, 0.0] if j in parts[-1:] else [0.0, 1.0] for j in jobs], np.float32)
    await index.store_vectors(jobs, vectors)
    assert await index.pending_embeddings(100) == []
    query = np.array([1.0, 0.0], np.float32)
    hits = await index.search_turns("export topic", ["shop"], 10, query_vector=query)
    assert hits[0].turn.id == "shop-s1-5" and hits[0].turn.text == long.text
    assert await index.forget_turns(["shop-s1-2"]) == 1  # the others keep their vectors
    assert await index.pending_embeddings(100) == []
    hits = await index.search_turns("export topic", ["shop"], 10, query_vector=query)
    assert hits[0].turn.id == "shop-s1-5"


async def test_recall_index_forgets_turns(index: RecallIndex) -> None:
    await index.add_turns(CONVERSATION)
    found = await index.search_turns("psycopg pool", ["shop"], 10)
    assert "shop-s1-2" in [hit.turn.id for hit in found]  # or its absence below proves nothing
    assert await index.forget_turns(["shop-s1-2", "nope"]) == 1
    hits = await index.search_turns("psycopg pool", ["shop"], 10)
    assert "shop-s1-2" not in [hit.turn.id for hit in hits]
    assert (await index.stats()).turns == 3


PROMPT_WITH_FACTS = [
    turn(1, "Let's keep the export cache in Redis. Never log the API tokens.", kind="prompt"),
    turn(2, "keep the export cache in Redis", kind="decision", key="cache"),
    turn(3, "Never log the API tokens", kind="rule", key="tokens"),
    turn(4, "The cache warmer now runs every five minutes."),
    turn(5, "Use PostgreSQL for the ledger", kind="decision", key="ledger"),
]


async def test_a_fact_read_from_a_turn_is_a_key_that_names_the_turn(index: RecallIndex) -> None:
    await index.add_turns(PROMPT_WITH_FACTS)
    said_in = {
        hit.turn.id: hit.said_in
        for hit in await index.search_turns("export cache Redis tokens ledger", ["shop"], 10)
    }
    assert said_in["shop-s1-2"] == said_in["shop-s1-3"] == "shop-s1-1"  # read out of the prompt
    assert said_in["shop-s1-1"] == ""
    assert said_in["shop-s1-5"] == ""  # said nowhere before it: a turn of its own
    # the facts stand apart from the conversation: the prompt is still the next turn's neighbour
    assert isinstance(index, InMemoryRecallIndex)
    assert index.view_text("shop-s1-4", "with_previous") == "\n".join(
        t.text for t in PROMPT_WITH_FACTS[::3][:2]
    )
    await index.forget_turns(["shop-s1-5"])  # a rebuild keeps what each fact was read from
    hits = await index.search_turns("export cache Redis", ["shop"], 10)
    assert {h.turn.id: h.said_in for h in hits}["shop-s1-2"] == "shop-s1-1"


REPLY_WITH_FACTS = [
    turn(1, "Which cache should the exports use? The ledger stays in Postgres.", kind="prompt"),
    turn(
        2,
        "Two steps:\n- **Use Redis** for the export cache\n- Keep `warm_cache` hourly",
        kind="message",
    ),
    turn(3, "Use Redis for the export cache", kind="decision", key="cache"),
    turn(4, "The cache warming question is settled", kind="decision", key="warming"),
    turn(5, "Keep warm_cache hourly", kind="decision", key="hourly"),
    # capture joins two sentences with "; ", and reads the prompt's facts after the reply
    turn(6, "Use Redis for the export cache; keep warm_cache hourly", kind="decision", key="both"),
    turn(7, "The ledger stays in Postgres", kind="decision", key="ledger"),
]


async def test_facts_are_keys_of_the_prompt_or_reply_they_were_read_from_markup_aside(
    index: RecallIndex,
) -> None:
    await index.add_turns(REPLY_WITH_FACTS)
    hits = await index.search_turns("export cache Redis warming hourly ledger", ["shop"], 10)
    said_in = {hit.turn.id: hit.said_in for hit in hits}
    assert said_in["shop-s1-3"] == "shop-s1-2"  # its words are the reply's, emphasis aside
    assert said_in["shop-s1-4"] == ""  # worded apart from the reply: a turn of its own
    assert said_in["shop-s1-5"] == "shop-s1-2"  # still the reply's, after the one that is not
    assert said_in["shop-s1-6"] == "shop-s1-2"
    assert said_in["shop-s1-7"] == "shop-s1-1"  # the prompt's, though the reply came between


SECOND_LOOK = [
    turn(1, "For the exports, let's go with Redis as the cache backend.", kind="prompt"),
    turn(2, "Done: the export cache now uses Redis, with a one-hour TTL.", kind="message"),
    turn(3, "Next, the ledger reports need a nightly job.", kind="prompt"),
    turn(4, "Added a nightly cron for the ledger reports.", kind="message"),
    # what the drain's second look records after later turns, dated when its turn was said
    replace(
        turn(5, "go with Redis as the cache backend", kind="decision", key="cache"),
        said_at=START + timedelta(minutes=1),
    ),
    replace(
        turn(6, "a one-hour TTL", kind="decision", key="ttl"), said_at=START + timedelta(minutes=2)
    ),
    # its words are the first prompt's, but it is dated otherwise: not read from it
    turn(7, "go with Redis as the cache backend", kind="decision", key="again"),
]


async def test_a_fact_recorded_after_later_turns_is_a_key_of_the_turn_said_at_its_time(
    index: RecallIndex,
) -> None:
    await index.add_turns(SECOND_LOOK[:4])
    await index.add_turns(SECOND_LOOK[4:])  # a later drain batch
    hits = await index.search_turns("Redis cache backend TTL", ["shop"], 10)
    said_in = {hit.turn.id: hit.said_in for hit in hits}
    assert said_in["shop-s1-5"] == "shop-s1-1"
    assert said_in["shop-s1-6"] == "shop-s1-2"
    assert said_in["shop-s1-7"] == ""
    await index.forget_turns(["shop-s1-7"])  # a rebuild finds them again
    hits = await index.search_turns("Redis cache backend TTL", ["shop"], 10)
    assert {h.turn.id: h.said_in for h in hits}["shop-s1-5"] == "shop-s1-1"


async def test_sqlite_recall_index_keeps_what_a_fact_was_read_from_across_a_restart(
    tmp_path: Path,
) -> None:
    first = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    await first.add_turns(PROMPT_WITH_FACTS[:2])
    await first.add_turns(PROMPT_WITH_FACTS[2:])  # a later drain batch
    await first.aclose()
    again = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    hits = await again.search_turns("export cache Redis tokens", ["shop"], 10)
    assert {h.turn.id: h.said_in for h in hits} == {
        "shop-s1-1": "",
        "shop-s1-2": "shop-s1-1",
        "shop-s1-3": "shop-s1-1",
        "shop-s1-4": "",
        "shop-s1-5": "",
    }
    await again.aclose()


async def test_sqlite_recall_index_survives_a_restart(tmp_path: Path) -> None:
    first = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    await first.add_turns(CONVERSATION)
    jobs = await first.pending_embeddings(100)
    await first.store_vectors(jobs, np.eye(len(jobs), 8, dtype=np.float32))
    await first.aclose()
    again = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    hits = await again.search_turns("which database for orders?", ["shop"], 10)
    assert [hit.turn.id for hit in hits][:2] == ["shop-s1-1", "shop-s1-2"]
    assert await again.pending_embeddings(100) == []  # vectors came back with the turns
    other_model = SqliteRecallIndex.in_data_dir(tmp_path, vector_model="another")
    await other_model.search_turns("database", ["shop"], 1)
    assert len(await other_model.pending_embeddings(100)) == len(jobs)  # never mixed
    await again.aclose()
    await other_model.aclose()


async def test_two_processes_on_one_file_embed_each_turn_once(tmp_path: Path) -> None:
    """A worker adds turns while a replica searches the same file: the replica reads what is
    new (not every turn again), takes the worker's vectors and never embeds the worker's turns
    itself; what a process finds unembedded the first time it reads a group (left by a process
    that stopped) it embeds; its own new turns stay its to embed across the other's writes; a
    turn the worker forgets is gone from the replica's results."""
    worker = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    replica = SqliteRecallIndex.in_data_dir(tmp_path, vector_model=MODEL)
    await worker.add_turns(CONVERSATION[:2])
    await replica.search_turns("database", ["shop"], 5)  # its first read of the group
    assert len(await replica.pending_embeddings(100)) == 2  # nobody has embedded them yet
    await worker.add_turns(CONVERSATION[2:])
    assert {hit.turn.id for hit in await replica.search_turns("export", ["shop"], 5)} >= {
        "shop-s1-4"
    }
    assert [job.turn_id for job in await replica.pending_embeddings(100)] == [
        "shop-s1-1",
        "shop-s1-2",
    ]  # the worker's new turns are the worker's
    jobs = await worker.pending_embeddings(100)
    assert {job.turn_id for job in jobs} == {turn.id for turn in CONVERSATION}
    await worker.store_vectors(jobs, np.eye(len(jobs), 8, dtype=np.float32))
    await replica.add_turns([turn(5, "The refunds job runs nightly")])
    assert [job.turn_id for job in await replica.pending_embeddings(100)] == ["shop-s1-5"]
    placed: list[str] = []
    place = replica.place

    def counted(turn: IndexedTurn, *, embed: bool = True) -> None:
        placed.append(turn.id)
        place(turn, embed=embed)

    replica.place = counted  # type: ignore[method-assign]
    await worker.add_turns([turn(6, "Refunds over 100 EUR need a second approver")])
    await replica.search_turns("refunds", ["shop"], 5)  # reads the worker's write again
    assert placed == ["shop-s1-6"]  # what is new, not every turn again
    assert [job.turn_id for job in await replica.pending_embeddings(100)] == ["shop-s1-5"]
    assert await worker.forget_turns(["shop-s1-4"]) == 1
    found = [
        hit.turn.id for hit in await replica.search_turns("invoice export refunds", ["shop"], 9)
    ]
    assert "shop-s1-4" not in found and {"shop-s1-5", "shop-s1-6"} <= set(found)
    # the newest row removed, then a turn added: SQLite gives it the removed turn's place
    await worker.forget_turns(["shop-s1-6"])
    await worker.add_turns([turn(7, "Refunds are logged in the ledger")])
    found = [hit.turn.id for hit in await replica.search_turns("refunds ledger", ["shop"], 9)]
    assert "shop-s1-7" in found and "shop-s1-6" not in found
    for index in (worker, replica):
        await index.aclose()


async def test_a_turn_ranks_by_its_first_stage_vector_as_soon_as_it_is_added(
    staged_index: RecallIndex,
) -> None:
    """No vector of the background's model yet, and the words cannot tell the two invoice
    turns apart: the first stage's vectors, given when the turns were added, do."""
    await staged_index.add_turns(INVOICES)
    assert len(await staged_index.pending_embeddings(100)) == 2  # the background's work stays

    async def first(query: str) -> str:
        hits = await staged_index.search_turns(query, ["shop"], 10, query_vector=ANY_QUERY_VECTOR)
        return hits[0].turn.id

    assert await first("invoice spreadsheet") == "shop-s1-1"
    assert await first("invoice weekly schedule") == "shop-s2-1"


async def test_sqlite_recall_index_keeps_first_stage_vectors_across_a_restart(
    tmp_path: Path,
) -> None:
    """Read back from the file (words alone would put the shorter CSV turn first)."""
    archive = turn(1, "The invoice archive is zipped once a year", session="s3")
    first = SqliteRecallIndex.in_data_dir(
        tmp_path, vector_model=MODEL, first_stage=WordLlamaEmbedder()
    )
    await first.add_turns([*INVOICES, archive])
    await first.aclose()
    again = SqliteRecallIndex.in_data_dir(
        tmp_path, vector_model=MODEL, first_stage=WordLlamaEmbedder()
    )

    async def ranked(query: str) -> list[str]:
        hits = await again.search_turns(query, ["shop"], 10, query_vector=ANY_QUERY_VECTOR)
        return [hit.turn.id for hit in hits]

    assert (await ranked("invoice weekly schedule"))[0] == "shop-s2-1"
    await again.forget_turns([archive.id])  # a rebuild keeps the others' first-stage vectors
    assert await ranked("invoice weekly schedule") == ["shop-s2-1", "shop-s1-1"]
    assert (await again.stats()).vectors == 0  # the test model's vectors: none yet
    await again.aclose()
