"""On a service a team shares, a session belongs to whoever started it (``plait.owners``).

A team member's call into a session another member (or the service's owner) started is refused,
its envelope never composed for them; the service's owner may enter any session. Real Redis.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from plait import Memory
from plait.adapters.backends.memory_store import InMemoryHotStore
from plait.nodes.hooks import NATIVE
from plait.owners import CHECK_AGAIN_S, SessionOwners
from plait.state.base.errors import NotYourSession
from plait.state.groups import acting_as
from plait.state.intents import FileChanged, HostCall, Sessionless, UserTurn


async def test_a_member_cannot_enter_a_session_another_started(memory: Memory) -> None:
    with acting_as("alice"):
        await memory.user_turn("ses_a", "I prefer tabs over spaces in every file.")
        assert "tabs" in await memory.model_call("ses_a", query="format the file")
    with acting_as("bob"):
        with pytest.raises(NotYourSession, match="ses_a"):
            await memory.model_call("ses_a", query="what does alice like")
        with pytest.raises(NotYourSession):
            await memory.compaction_before("ses_a")
        with pytest.raises(NotYourSession):  # a child of alice's session is hers too
            await memory.observe("ses_child", [UserTurn(text="hi")], parent_id="ses_a")
        with pytest.raises(NotYourSession):
            await memory.dispatch.record("ses_a", [])
        await memory.user_turn("ses_b", "We use Postgres for the ledger.")
    # the service's owner enters any session; its own are closed to members
    assert "tabs" in await memory.model_call("ses_a", query="format the file")
    await memory.user_turn("ses_owner", "Deploy on Fridays is fine.")
    with acting_as("alice"), pytest.raises(NotYourSession):
        await memory.user_turn("ses_owner", "what is said here")
    kinds = [event.summary for event in await memory.backends.store.read_events("ses_a")]
    assert not any("what does alice like" in summary for summary in kinds)


async def test_file_news_goes_only_to_the_senders_own_sessions(memory: Memory) -> None:
    with acting_as("alice"):
        await memory.user_turn("ses_a", "Edit app.py next.")
    with acting_as("bob"):
        await memory.user_turn("ses_b", "Look at the ledger.")
        call = HostCall(
            host=NATIVE, target=Sessionless(file="notes.md"), payload=[FileChanged(path="notes.md")]
        )
        await memory.dispatch.answer(call)
    await memory.user_turn("ses_o", "Check the deploy script.")  # the service's owner
    owners = HostCall(host=NATIVE, target=Sessionless(file="deploy.sh"), payload=[])
    await memory.dispatch.answer(replace(owners, payload=[FileChanged(path="deploy.sh")]))
    store = memory.backends.store
    said = {s: [e.summary for e in await store.read_events(s)] for s in ("ses_a", "ses_b", "ses_o")}
    assert any("notes.md" in summary for summary in said["ses_b"]), said
    assert any("deploy.sh" in summary for summary in said["ses_o"]), said
    assert not any("notes.md" in x or "deploy.sh" in x for x in said["ses_a"]), said
    assert not any("deploy.sh" in summary for summary in said["ses_b"]), said


async def test_a_binding_is_remembered_and_asked_again_after_a_while() -> None:
    class Counted(InMemoryHotStore):
        claims = 0

        async def claim_session(self, root_session_id: str, owner: str) -> str:
            Counted.claims += 1
            return await super().claim_session(root_session_id, owner)

    now = [0.0]
    owners = SessionOwners(Counted(), clock=lambda: now[0])
    with acting_as("alice"):
        assert not owners.known_mine("s")
        await owners.admit("s")
        await owners.admit("s")
        assert owners.known_mine("s") and Counted.claims == 1
    with acting_as("bob"):
        assert not owners.known_mine("s")
        with pytest.raises(NotYourSession):
            await owners.admit("s")
    assert not owners.known_mine("s")  # the service's owner may enter, but it is alice's
    now[0] += CHECK_AGAIN_S
    with acting_as("alice"):
        await owners.admit("s")
    assert Counted.claims == 2
