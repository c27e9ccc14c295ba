"""Recall when it matters: a new session's first model call, and what was queued a moment ago."""

from __future__ import annotations

from pathlib import Path

from plait import Memory, Settings
from plait.state.groups import acting_as


def settings_for(tmp_path: Path, redis_url: str) -> Settings:
    return Settings.load(
        tmp_path,
        redis={"url": redis_url, "drain_quiet_seconds": 0},
        data_dir=tmp_path / "data",
        recall={"embedder": "none"},
        graphiti={"group_id_prefix": f"lt{tmp_path.name[-8:].replace('_', '')}"},
    )


async def test_a_new_sessions_first_model_call_carries_the_projects_memory(
    tmp_path: Path, redis_url: str
) -> None:
    async with Memory.open(tmp_path, settings=settings_for(tmp_path, redis_url)) as memory:
        assert memory.background is not None
        await memory.remember("first", "Use Redis for the export cache, not SQLite", "decision")
        await memory.remember("first", "Never commit directly to main", "rule")
        await memory.user_turn("first", "What did we just change?")
        await memory.background.drain()
        await memory.lifecycle("second", "created")  # the host says a session started
        await memory.background.refreshed()
        envelope = await memory.model_call("second", query="go on with the docs")
    assert "<persistent_memory>" in envelope
    assert "Use Redis for the export cache" in envelope and "Never commit" in envelope
    assert "What did we just change" not in envelope  # a prompt is not knowledge
    assert "node_refs" not in envelope


async def test_what_was_remembered_is_recalled_before_any_drain(
    tmp_path: Path, redis_url: str
) -> None:
    settings = settings_for(tmp_path, redis_url)
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        await memory.remember("s1", "The invoice PDF renderer is WeasyPrint", "decision")
        assert await memory.backends.store.queue_depth() >= 1
        found = await memory.recall("s2", "which library renders invoice PDFs?")
        hits = await memory.search("WeasyPrint")
    assert found is not None and "WeasyPrint" in found
    assert hits and hits[0].kind == "decision" and "WeasyPrint" in hits[0].text


async def test_a_long_prompt_is_found_by_its_last_words(tmp_path: Path, redis_url: str) -> None:
    """A pasted spec of ~9 KB: the index searches all of it (it kept 2,000 characters, then the
    event 4 KiB), and the hit is the prompt it was said in."""
    filler = "We walk through the quarterly roadmap, the hiring plan and the budget. " * 120
    settings = settings_for(tmp_path, redis_url)
    async with Memory.open(tmp_path, settings=settings, start_background=False) as memory:
        await memory.user_turn("s1", filler + "Last: the nightly export moves to zanzibar-queue.")
        events = await memory.backends.store.read_events("s1")
        assert any("zanzibar-queue" in event.body for event in events)
        hits = await memory.search("zanzibar-queue")
    assert hits and hits[0].kind == "prompt"


async def test_each_team_member_recalls_their_own_preferences(
    tmp_path: Path, redis_url: str
) -> None:
    """On a service a team shares, a preference said in a member's session goes to their own
    group: a new session of theirs recalls it, the owner's does not, and the other way round
    (the refresh runs in the background for the member who asked for it)."""
    async with Memory.open(tmp_path, settings=settings_for(tmp_path, redis_url)) as memory:
        assert memory.background is not None
        with acting_as("alice"):
            await memory.user_turn("alice-1", "I prefer tabs over spaces in Python files.")
        await memory.user_turn("owner-1", "I prefer a dark terminal theme.")
        await memory.background.drain()
        envelopes = {}
        for who, member in (("alice", "alice"), ("owner", None)):
            with acting_as(member):
                await memory.lifecycle(f"{who}-2", "created")
                await memory.background.refreshed()
                envelopes[who] = await memory.model_call(f"{who}-2", query="set up the editor")
    assert "tabs over spaces" in envelopes["alice"] and "dark terminal" not in envelopes["alice"]
    assert "dark terminal" in envelopes["owner"] and "tabs over spaces" not in envelopes["owner"]


async def test_a_members_preference_is_theirs_even_inside_a_prompt(
    tmp_path: Path, redis_url: str
) -> None:
    """What alice says goes to the project, but the preference she states in it stays hers:
    bob's search and bob's new session find the rest of her words, never the preference, and
    the project's summary of her session does not repeat it."""
    said = "I prefer tabs over spaces in Python files. Add a CSV export to the billing report."
    async with Memory.open(tmp_path, settings=settings_for(tmp_path, redis_url)) as memory:
        assert memory.background is not None
        with acting_as("alice"):
            await memory.user_turn("alice-1", said)
            queued = await memory.search("tabs over spaces in Python files")  # before any drain
        await memory.background.drain()
        with acting_as("bob"):
            found = await memory.search("tabs over spaces in Python files")
            project = await memory.search("CSV export billing report")
            await memory.lifecycle("bob-1", "created")
            await memory.background.refreshed()
            envelope = await memory.model_call("bob-1", query="tabs or spaces in Python files?")
        with acting_as("alice"):
            mine = await memory.search("tabs over spaces in Python files")
        await memory.lifecycle("alice-1", "idle")
        await memory.background.summarize_pending()
        summaries = await memory.observations.search("tabs spaces CSV export billing")
    assert any("tabs over spaces" in hit.text for hit in mine + queued)
    assert not any("tabs" in hit.text for hit in found), found
    assert any("CSV export" in hit.text for hit in project), project
    assert "tabs over spaces" not in envelope
    assert summaries and all("tabs" not in o.content for o, _ in summaries)
    assert any("CSV export" in o.content for o, _ in summaries)
