"""The web viewer over HTTP, in process on a real Memory: login, refusals, pages, changes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest
from support.team import team

from plait import Memory
from plait.adapters.backends.spool import FileSpool
from plait.adapters.hosts.http import create_app
from plait.adapters.hosts.viewer.auth import ViewerAuth
from plait.adapters.hosts.viewer.pages import envelope_lines
from plait.state.events import EventKind, SessionEvent
from plait.state.observations import check_draft
from plait.state.ports import QueueEntry

TOKEN = "viewer-token"
BASE = "http://127.0.0.1"

SAME = {"origin": BASE, "sec-fetch-site": "same-origin"}  # a form posted from a viewer page


@pytest.fixture
async def opened(memory: Memory) -> AsyncIterator[tuple[Memory, httpx.AsyncClient]]:
    app = create_app(memory, token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        yield memory, client


async def login(client: httpx.AsyncClient) -> str:
    """Log the client in; the CSRF token of its session."""
    issued = await client.post("/v1/viewer/login", headers={"authorization": f"Bearer {TOKEN}"})
    assert issued.status_code == 200
    entered = await client.get(issued.json()["path"])
    assert entered.status_code == 303
    cookie = entered.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    page = await client.get("/ui/health")
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]


class Viewer(NamedTuple):
    """A viewer logged in: the memory it shows, its client and the CSRF token of its session."""

    memory: Memory
    client: httpx.AsyncClient
    csrf: str


@pytest.fixture
async def viewer(opened: tuple[Memory, httpx.AsyncClient]) -> Viewer:
    memory, client = opened
    return Viewer(memory, client, await login(client))


async def test_viewer_login_link_works_once_and_a_forged_one_never(
    opened: tuple[Memory, httpx.AsyncClient],
) -> None:
    _, client = opened
    assert (await client.get("/ui/sessions")).status_code == 401
    assert (await client.post("/v1/viewer/login")).status_code == 401  # bearer token needed
    issued = await client.post("/v1/viewer/login", headers={"authorization": f"Bearer {TOKEN}"})
    link = issued.json()["path"]
    assert (await client.get(link)).status_code == 303
    client.cookies.clear()
    again = await client.get(link)
    assert again.status_code == 403 and "Login link not valid" in again.text
    forged = await client.get("/ui/login?token=forged")
    assert forged.status_code == 403
    assert (await client.get("/ui/sessions")).status_code == 401


async def test_viewer_login_links_are_for_the_owners_token_only(
    memory: Memory, tmp_path: Path
) -> None:
    team_tokens, tokens = team(tmp_path / "tokens")
    app = create_app(memory, token=TOKEN, team=team_tokens)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        member = {"authorization": f"Bearer {tokens['alice']}"}
        assert (await client.post("/v1/memory/memory_stats", headers=member)).status_code == 200
        assert (await client.post("/v1/viewer/login", headers=member)).status_code == 403


def test_viewer_login_link_expires() -> None:
    now = [0.0]
    auth = ViewerAuth(clock=lambda: now[0])
    token = auth.issue_link()
    now[0] = 601.0
    assert auth.redeem(token) is None


async def test_viewer_pages_carry_the_security_headers(viewer: Viewer) -> None:
    _, client, _ = viewer
    for path in ("/ui/sessions", "/ui/memory", "/ui/health", "/ui/nowhere", "/ui/static/viewer.js"):
        response = await client.get(path)
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert "unsafe-inline" not in policy
        assert response.headers["x-content-type-options"] == "nosniff"
    assert (await client.get("/ui/nowhere")).status_code == 404
    wrong_host = await client.get("/ui/sessions", headers={"host": "evil.example"})
    assert wrong_host.status_code == 400


async def test_viewer_refuses_changes_from_elsewhere_and_changes_nothing(viewer: Viewer) -> None:
    memory, client, csrf = viewer
    saved = await memory.observations.save(check_draft(title="Keep me", content="kept"))
    path = f"/ui/memory/{saved.observation.id}/forget"
    refusals = [
        ({"origin": "http://evil.example", "sec-fetch-site": "cross-site"}, {"csrf": csrf}),
        ({"origin": "http://127.0.0.1:9", "sec-fetch-site": "same-site"}, {"csrf": csrf}),
        (SAME, {"csrf": "guessed"}),
        (SAME, {}),
        ({}, {"csrf": csrf}),  # neither header: not from a browser's page
    ]
    for headers, form in refusals:
        response = await client.post(path, headers=headers, data=form)
        assert response.status_code == 403, (headers, form)
    assert (await memory.observations.get(saved.observation.id)).title == "Keep me"
    done = await client.post(path, headers=SAME, data={"csrf": csrf})
    assert done.status_code == 200 and "Forgotten" in done.text


async def test_viewer_bad_input_gets_a_clear_page(viewer: Viewer) -> None:
    _, client, _ = viewer
    long = await client.get("/ui/memory", params={"q": "x" * 600})
    assert long.status_code == 413 and "Search too long" in long.text
    assert (await client.get("/ui/memory", params={"type": "mood"})).status_code == 400
    for page in ("-1", "0", "x", "9" * 5000):
        assert (await client.get("/ui/memory", params={"page": page})).status_code == 400
    last = await client.get("/ui/sessions", params={"page": "999999"})
    assert last.status_code == 200  # past the end: the last page
    assert (await client.get("/ui/memory/o000000000000")).status_code == 404
    assert (await client.get("/ui/memory/not-an-id")).status_code == 404
    assert (await client.get("/ui/sessions/no-such-session")).status_code == 404
    assert (await client.get("/ui/sessions/" + "s" * 10_000)).status_code == 404


async def test_viewer_lists_sessions_and_subagents(viewer: Viewer) -> None:
    memory, client, _ = viewer
    await memory.user_turn("root-a", "Add CSV export. Rule: never commit to main.")
    await memory.user_turn("child-a", "Look at the tests", parent_id="root-a")
    await memory.user_turn("root-b", "Fix the login bug")
    listed = await client.get("/ui/sessions")
    assert listed.status_code == 200
    assert listed.text.index("root-b") < listed.text.index("root-a")
    assert "child-a" in listed.text
    timeline = await client.get("/ui/sessions/root-a")
    assert timeline.status_code == 200
    assert "never commit to main" in timeline.text and "child-a" in timeline.text


def test_envelope_lines_name_each_lines_tier_and_source() -> None:
    envelope = (
        '<session_memory version="1"><!--plait:0-->\n'
        "  <last_request>fix &lt;b&gt;</last_request>\n"
        "  <key_decisions><decision>d1</decision><decision>d2</decision></key_decisions>\n"
        "  <session_snapshot>\nsummary: s\n  </session_snapshot>\n"
        '  <persistent_memory node_refs="a">\n- a fact\n  </persistent_memory>\n'
        "</session_memory>"
    )
    lines = [(x["tier"], x["text"], x["event_id"]) for x in envelope_lines(envelope, {"d2": 7})]
    assert lines == [
        ("last_request", "fix <b>", None),
        ("key_decisions", "d1", None),
        ("key_decisions", "d2", 7),
        ("session_snapshot", "summary: s", None),
        ("persistent_memory", "- a fact", None),
    ]


async def test_viewer_shows_the_envelopes_model_calls_received(viewer: Viewer) -> None:
    memory, client, _ = viewer
    await memory.user_turn("ses-env", "Add CSV export. Rule: never commit to main.")
    assert "never commit to main" in await memory.model_call("ses-env", query="csv")
    page = await client.get("/ui/sessions/ses-env")
    assert "Envelopes received" in page.text
    assert re.search(r"model call · [\d-]+ [\d:]+", page.text)


async def test_viewer_drops_a_dead_letter_and_refuses_unknown_ones(viewer: Viewer) -> None:
    memory, client, csrf = viewer
    failed = SessionEvent(
        root_session_id="r", session_id="r", kind=EventKind.DECISION, summary="failed drain"
    )
    # an entry that failed, as the drain hands it over (the shared stream is left alone)
    entry = QueueEntry(entry_id="0-1", group_id=memory.group_id, event=failed, deliveries=3)
    await memory.backends.store.dead_letter(entry, "no graph")
    dead_id = next(
        d.dead_id
        for d in await memory.backends.store.list_dead(10_000)
        if d.event.summary == "failed drain"
    )
    unknown = await client.post("/ui/health/dead/0-0/drop", headers=SAME, data={"csrf": csrf})
    assert unknown.status_code == 404
    nonsense = await client.post(
        f"/ui/health/dead/{dead_id}/eat", headers=SAME, data={"csrf": csrf}
    )
    assert nonsense.status_code == 404
    assert dead_id in (await client.get("/ui/health")).text
    dropped = await client.post(
        f"/ui/health/dead/{dead_id}/drop", headers=SAME, data={"csrf": csrf}
    )
    assert dropped.status_code == 303
    assert dead_id not in [d.dead_id for d in await memory.backends.store.list_dead(10_000)]


async def test_viewer_forgets_a_captured_decision_and_the_next_envelope_drops_it(
    viewer: Viewer,
) -> None:
    memory, client, csrf = viewer
    await memory.user_turn("root-f", "We decided to use MongoDB for the ledger.")
    await memory.user_turn("root-f", "Decision: queue jobs on Redis streams.")
    assert "MongoDB" in await memory.envelope("root-f")
    events = await memory.backends.store.read_events("root-f")
    [event] = [e for e in events if e.kind == EventKind.DECISION and "MongoDB" in e.summary]
    timeline = await client.get("/ui/sessions/root-f")
    link = f"/ui/events/{event.id}/forget?session=root-f"
    assert link in timeline.text.replace("&amp;", "&")
    asked = await client.get(link)
    assert asked.status_code == 200 and "MongoDB" in asked.text and "Forget it" in asked.text
    assert (await client.get("/ui/events/999/forget?session=root-f")).status_code == 404
    assert (await client.get("/ui/events/1/forget?session=nobody")).status_code == 404
    assert (await client.post(link, data={"csrf": csrf})).status_code == 403  # not from a page
    assert "MongoDB" in await memory.envelope("root-f")
    done = await client.post(link, headers=SAME, data={"csrf": csrf})
    assert done.status_code == 303
    envelope = await memory.envelope("root-f")
    assert "MongoDB" not in envelope and "Redis streams" in envelope


async def test_viewer_corrects_a_captured_decision_and_the_next_envelope_says_so(
    viewer: Viewer,
) -> None:
    memory, client, csrf = viewer
    await memory.user_turn("root-e", "We decided to use MongoDB for the ledger.")
    events = await memory.backends.store.read_events("root-e")
    [event] = [e for e in events if e.kind == EventKind.DECISION]
    timeline = await client.get("/ui/sessions/root-e")
    link = f"/ui/events/{event.id}/edit?session=root-e"
    assert link in timeline.text.replace("&amp;", "&")
    form = await client.get(link)
    assert form.status_code == 200 and "MongoDB" in form.text and "Save the correction" in form.text
    assert (await client.get("/ui/events/999/edit?session=root-e")).status_code == 404
    fixed = "We decided to use PostgreSQL for the ledger."
    assert (await client.post(link, data={"csrf": csrf, "text": fixed})).status_code == 403
    empty = await client.post(link, headers=SAME, data={"csrf": csrf, "text": "  "})
    assert empty.status_code == 400 and "MongoDB" in await memory.envelope("root-e")
    done = await client.post(link, headers=SAME, data={"csrf": csrf, "text": fixed})
    assert done.status_code == 303
    decisions = re.search(r"<key_decisions>(.*?)</key_decisions>", await memory.envelope("root-e"))
    assert decisions is not None  # the prompt it came from stays: it is what the person said
    assert "MongoDB" not in decisions[1] and "PostgreSQL for the ledger" in decisions[1]
    [now] = [
        e for e in await memory.backends.store.read_events("root-e") if e.kind == EventKind.DECISION
    ]
    assert now.speaker == "user" and now.source_hook == "viewer.correct"


async def test_viewer_draws_the_knowledge_graph_and_one_entitys_facts(viewer: Viewer) -> None:
    memory, client, _ = viewer
    empty = await client.get("/ui/graph")
    assert empty.status_code == 200 and "No entities yet" in empty.text
    await memory.user_turn("ses-graph", "We decided to use PostgreSQL for the ledger.")
    await memory.user_turn("ses-graph", "Rule: never call the payment API from unit tests.")
    assert memory.background is not None
    assert (await memory.background.drain()).written >= 1
    page = await client.get("/ui/graph?limit=5")
    assert page.status_code == 200 and "<svg" in page.text
    facts = re.findall(r"<line [^>]*><title>([^<]+)</title>", page.text)
    assert 1 <= len(facts) <= 5 and any("PostgreSQL" in fact for fact in facts)
    entity = re.search(r'/ui/graph\?entity=([0-9a-f-]+)&amp;limit=5">\s*<circle', page.text)
    assert entity is not None
    focused = await client.get(f"/ui/graph?entity={entity[1]}&limit=5")
    assert focused.status_code == 200 and "Facts of " in focused.text
    shown = re.findall(r"<line ", focused.text)
    assert 1 <= len(shown) <= len(facts)  # only that entity's facts
    odd = await client.get("/ui/graph?limit=lots&entity=<script>")
    assert odd.status_code == 200 and "<script>" not in odd.text


async def test_viewer_lists_dead_calls_and_replays_one_at_once(
    viewer: Viewer, tmp_path: Path
) -> None:
    memory, client, csrf = viewer
    intake = memory.dispatch.open_intake(FileSpool(tmp_path / "spool"))
    call = {"name": "chat.message", "input": {"sessionID": "ses_dead"}, "output": {}}
    kept = [
        intake.dead.dead_letter_call(
            call_id=f"c{n}", host="opencode", call=call, reason=f"no <b>host</b> {n}"
        )
        for n in (1, 2)
    ]
    page = (await client.get("/ui/health")).text
    assert all(dead.dead_id in page for dead in kept)
    assert "no &lt;b&gt;host&lt;/b&gt; 1" in page  # text, not markup
    unknown = await client.post("/ui/health/calls/call-0/drop", headers=SAME, data={"csrf": csrf})
    assert unknown.status_code == 404
    replayed = await client.post(
        f"/ui/health/calls/{kept[0].dead_id}/replay", headers=SAME, data={"csrf": csrf}
    )
    assert replayed.status_code == 303
    # back in the spool and taken by this process at once (not when another call arrives)
    assert [d.dead_id for d in intake.dead.list_dead_calls()] == [kept[1].dead_id]
    assert intake.spool.adopt() == []
    dropped = await client.post(
        f"/ui/health/calls/{kept[1].dead_id}/drop", headers=SAME, data={"csrf": csrf}
    )
    assert dropped.status_code == 303 and intake.dead_count() == 0
