"""Forget means gone: after ``plait memory forget`` (or MCP's ``memory_delete``) no copy of an
observation reaches a model or a person, and a revision replaced by an update stops being
recalled.

Save, drain (the recall index and the knowledge graph on FalkorDB get their copies), see it
recalled, forget it through the CLI, drain again; then a new session's first envelope and
``plait recall`` must not carry it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from support.plait_cli import PLAIT

from plait import Memory
from plait.observation_tools import MemoryToolbox


@pytest.fixture
async def memory(open_memory: Callable[..., Any]) -> AsyncIterator[Memory]:
    """The background runs: a new session's first call waits for its recall refresh."""
    async with open_memory(start_background=True) as opened:
        yield opened


async def first_envelope(memory: Memory, session: str, query: str) -> str:
    """A new session's envelope once its recall refresh has run."""
    await memory.model_call(session, query=query)
    assert memory.background is not None
    await memory.background.refreshed()
    return await memory.model_call(session, query=query)


def plait(memory: Memory, redis_url: str, group_prefix: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env.update(
        PLAIT_DATA_DIR=str(memory.settings.resolved_data_dir()),
        PLAIT_REDIS__URL=redis_url,
        PLAIT_GRAPHITI__GROUP_ID_PREFIX=group_prefix,
    )
    done = subprocess.run(
        [PLAIT, *args, "--project", str(memory.project_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def recalled(memory: Memory, redis_url: str, group_prefix: str, query: str) -> str:
    """The texts ``plait recall`` finds for the query, one a line."""
    hits = json.loads(plait(memory, redis_url, group_prefix, "recall", query, "--json"))
    return "\n".join(hit["text"] for hit in hits)


async def test_a_forgotten_observation_reaches_no_model_and_no_person(
    memory: Memory, redis_url: str, group_prefix: str
) -> None:
    tools = MemoryToolbox(memory.observations, host="test")
    title = "Deploys go to the kiwi-cluster"
    saved = await tools.call(
        "memory_save", {"title": title, "content": "What: kiwi-cluster", "type": "decision"}, "s0"
    )
    assert memory.background is not None
    await memory.background.drain()
    query = "where do deploys go kiwi-cluster"
    assert "kiwi-cluster" in await first_envelope(memory, "ses_before", query)
    assert "kiwi-cluster" in recalled(memory, redis_url, group_prefix, query)
    await memory.user_turn("ses_before", "Where do the deploys go again?")
    staged_before, _ = await memory.backends.store.take_envelope("ses_before")
    assert staged_before is not None and "kiwi-cluster" in staged_before

    plait(memory, redis_url, group_prefix, "memory", "forget", saved["id"])
    await memory.background.drain()

    assert "kiwi-cluster" not in await first_envelope(memory, "ses_after", query)
    assert "kiwi-cluster" not in recalled(memory, redis_url, group_prefix, query)
    staged_after, _ = await memory.backends.store.take_envelope("ses_before")
    assert staged_after is not None and "kiwi-cluster" not in staged_after
    hits = await memory.search(query)
    assert not any("kiwi-cluster" in hit.text for hit in hits)


async def test_a_deleted_observation_not_yet_drained_never_reaches_the_graph(
    memory: Memory,
) -> None:
    tools = MemoryToolbox(memory.observations, host="test")
    saved = await tools.call(
        "memory_save",
        {"title": "Cache with the wombat layer", "content": "What: wombat", "type": "decision"},
        "s0",
    )
    await tools.call("memory_delete", {"id": saved["id"]}, "s0")  # MCP's path
    assert memory.background is not None
    await memory.background.drain()
    assert not any("wombat" in hit.text for hit in await memory.search("wombat layer cache"))


async def test_an_updated_revision_stops_being_recalled(memory: Memory) -> None:
    tools = MemoryToolbox(memory.observations, host="test")
    saved = await tools.call(
        "memory_save",
        {"title": "Queue on the quokka broker", "content": "What: quokka", "type": "decision"},
        "s0",
    )
    assert memory.background is not None
    await memory.background.drain()
    await tools.call(
        "memory_update",
        {"id": saved["id"], "title": "Queue on the numbat broker", "content": "What: numbat"},
        "s0",
    )
    await memory.background.drain()
    texts = [hit.text for hit in await memory.search("queue broker quokka numbat")]
    assert any("numbat" in text for text in texts), texts
    assert not any("quokka" in text for text in texts), texts


async def test_forgotten_captured_events_reach_no_model_and_no_person(
    memory: Memory, redis_url: str, group_prefix: str
) -> None:
    """``plait forget --match``: the events, their recall turns and graph episodes, the
    session's snapshot and envelopes; what was not asked for stays."""
    await memory.user_turn("ses_cap", "We decided to keep invoices in the platypus store.")
    await memory.user_turn("ses_cap", "We decided to lint with ruff, never flake8.")
    assert memory.background is not None
    await memory.background.drain()
    query = "where do the invoices live platypus store"
    assert "platypus" in await memory.envelope("ses_cap")
    assert "platypus" in recalled(memory, redis_url, group_prefix, query)

    dry = plait(memory, redis_url, group_prefix, "forget", "--match", "platypus", "--dry-run")
    assert "would forget 2 event(s)" in dry and "platypus" in dry  # the prompt and the decision
    assert "platypus" in await memory.envelope("ses_cap")  # a dry run changes nothing

    done = plait(memory, redis_url, group_prefix, "forget", "--match", "PLATYPUS")
    assert "forgot 2 event(s)" in done
    await memory.background.drain()

    store = memory.backends.store
    envelope = await memory.envelope("ses_cap")
    assert "platypus" not in envelope and "ruff" in envelope
    assert not any(
        "platypus" in f"{e.summary} {e.body}" for e in await store.read_events("ses_cap")
    )
    staged, _ = await store.take_envelope("ses_cap")
    assert staged is not None and "platypus" not in staged
    assert not any("platypus" in r.envelope for r in await store.received_envelopes("ses_cap"))
    assert "platypus" not in await first_envelope(memory, "ses_new", query)
    assert "platypus" not in recalled(memory, redis_url, group_prefix, query)
    assert not any("platypus" in hit.text for hit in await memory.search(query))


async def test_forget_a_whole_session_and_an_unknown_one(
    memory: Memory, redis_url: str, group_prefix: str
) -> None:
    await memory.user_turn("ses_gone", "We decided to name the service wallaby.")
    await memory.user_turn("ses_kept", "We decided to name the queue echidna.")
    plait(memory, redis_url, group_prefix, "forget", "--session", "ses_gone")
    assert "wallaby" not in await memory.envelope("ses_gone")
    assert "echidna" in await memory.envelope("ses_kept")

    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env.update(PLAIT_REDIS__URL=redis_url, PLAIT_GRAPHITI__GROUP_ID_PREFIX=group_prefix)
    data = str(memory.settings.resolved_data_dir())
    for args, says in [
        (["--session", "ses_nobody"], "no session 'ses_nobody'"),
        (["--before", "last tuesday"], "not an ISO 8601 date"),
        ([], "say what to forget"),
    ]:
        done = subprocess.run(
            [PLAIT, "forget", *args, "--project", str(memory.project_dir), "--data-dir", data],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert "echidna" in await memory.envelope("ses_kept")  # a refused forget changes nothing
