"""The web viewer in a real headless Chromium (Debian's ``chromium``), driven by Playwright.

A real ``plait serve`` app on a loopback port over a real Memory (embedded FalkorDB); the browser
logs in with a one-time link, browses, searches, edits, forgets, replays a dead letter, is refused
a cross-site change, and shows stored HTML and script as text. Screenshots of each page go to
``docs/viewer/``. Skipped when ``/usr/bin/chromium`` is absent (CI installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import re
import socket
import tempfile
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.local_web import free_port

from plait import Memory
from plait.adapters.hosts.http import create_app
from plait.state.events import EventKind, SessionEvent
from plait.state.observations import check_draft

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "browser-token"
SHOTS = Path(__file__).resolve().parents[3] / "docs" / "viewer"
IMG_PAYLOAD = "<img src=x onerror=alert(1)>"
SCRIPT_PAYLOAD = "<script>alert(2)</script>"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)"
)


@dataclass
class Service:
    """A service on a loopback port, running on its own event loop in a thread."""

    url: str
    memory: Memory
    loop: asyncio.AbstractEventLoop

    def run[T](self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the service's loop; its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(60)

    def link(self) -> str:
        """A fresh one-time login link."""
        headers = {"authorization": f"Bearer {TOKEN}"}
        issued = httpx.post(f"{self.url}/v1/viewer/login", headers=headers)
        return self.url + issued.json()["path"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    import uvicorn

    root = tmp_path_factory.mktemp("viewer")
    project = root / "project"
    project.mkdir()
    port = free_port()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        async with Memory.open(
            project,
            root / "data",  # its own embedded server: the drain queue holds only this test's
        ) as memory:
            app = create_app(memory, token=TOKEN)
            app.state.port = port
            config = uvicorn.Config(
                app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"
            )
            server = uvicorn.Server(config)
            holder.update(memory=memory, server=server)
            serving = asyncio.ensure_future(server.serve())
            while not server.started:
                await asyncio.sleep(0.02)
            started.set()
            await serving

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    assert started.wait(60), "the service did not start"
    yield Service(url=f"http://127.0.0.1:{port}", memory=holder["memory"], loop=loop)
    holder["server"].should_exit = True
    thread.join(30)
    loop.close()


@pytest.fixture(scope="module")
def seeded(service: Service) -> dict[str, str]:
    """Sessions (a root with a subagent), observations (one carrying XSS), a dead letter."""
    memory = service.memory

    async def seed() -> dict[str, str]:
        dead = SessionEvent(
            root_session_id="ses_main",
            session_id="ses_main",
            kind=EventKind.DECISION,
            summary="A drain that failed",
        )
        await memory.backends.store.enqueue(memory.group_id, [dead])
        for entry in await memory.backends.store.claim("viewer-test", count=1):
            await memory.backends.store.dead_letter(entry, "the knowledge graph said no")
        await memory.user_turn("ses_main", "Add CSV export. Rule: never commit to main.")
        await memory.user_turn("ses_sub", "Look at the exporter tests", parent_id="ses_main")
        hostile = SessionEvent(
            root_session_id="ses_main",
            session_id="ses_main",
            kind=EventKind.DECISION,
            summary=f"Use {IMG_PAYLOAD} and {SCRIPT_PAYLOAD}",
            refs=(f"{IMG_PAYLOAD}.py",),
        )
        await memory.dispatch.record("ses_main", [hostile])
        await memory.compaction_after("ses_main", "Summary of the first hour")
        await memory.model_call("ses_main", query="CSV export")
        xss = await memory.observations.save(
            check_draft(
                title=f"XSS {IMG_PAYLOAD}",
                content=f"body {SCRIPT_PAYLOAD}",
                files=[f"src/{IMG_PAYLOAD}.py"],
            )
        )
        zebra = await memory.observations.save(
            check_draft(
                title="Deploys go to the zebra-cluster",
                content="What: production deploys target zebra-cluster.",
                type="decision",
            )
        )
        return {"xss": xss.observation.id, "zebra": zebra.observation.id}

    return service.run(seed())


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, service: Service, seeded: dict[str, str]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.dialogs = dialogs
    opened.goto(service.link())
    yield opened
    assert dialogs == [], "a dialog fired: stored script ran"
    context.close()


def shot(page: Any, name: str) -> None:
    """A screenshot: into docs/viewer/ with PLAIT_SCREENSHOTS=1, else a scratch file (a test run
    leaves the checkout as it was; the page is rendered either way)."""
    if os.environ.get("PLAIT_SCREENSHOTS") == "1":
        path = SHOTS / f"{name}.png"
    else:
        path = Path(tempfile.gettempdir()) / f"plait-viewer-{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):  # a busy machine's Chromium sometimes cannot capture at once
        try:
            page.screenshot(path=str(path))
            return
        except Exception:
            if attempt == 2:
                raise
            page.wait_for_timeout(500)


def test_browser_login_then_a_used_link_is_refused(
    browser: Any, service: Service, seeded: dict[str, str]
) -> None:
    context = browser.new_context()
    page = context.new_page()
    link = service.link()
    page.goto(link)
    assert page.url.endswith("/ui/sessions")
    cookie = next(c for c in context.cookies() if c["name"] == "plait_viewer")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""
    other = browser.new_context()
    again = other.new_page()
    response = again.goto(link)
    assert response.status == 403
    assert again.get_by_role("heading", name="Login link not valid").is_visible()
    shot(again, "login-refused")
    assert again.goto(f"{service.url}/ui/sessions").status == 401
    other.close()
    context.close()


def test_browser_sessions_and_timeline(page: Any) -> None:
    page.get_by_role("heading", name="Sessions").wait_for()
    assert page.get_by_text("ses_sub").first.is_visible()
    shot(page, "sessions")
    page.get_by_role("link", name="ses_main").click()
    page.get_by_role("heading", name="Timeline").wait_for()
    assert page.locator("tr.compaction").count() >= 1
    assert page.get_by_text("never commit to main").first.is_visible()
    assert page.get_by_text("Envelope of the next model call").is_visible()
    received = page.locator("details.received").first
    assert "model call" in received.locator("summary").inner_text()
    assert received.get_by_role("cell", name="never commit to main", exact=True).is_visible()
    shot(page, "session")


def test_browser_stored_markup_is_shown_as_text(page: Any, service: Service) -> None:
    page.goto(f"{service.url}/ui/sessions/ses_main")
    cell = page.get_by_text(f"Use {IMG_PAYLOAD} and {SCRIPT_PAYLOAD}")
    assert cell.first.is_visible()
    page.goto(f"{service.url}/ui/memory")
    assert page.get_by_role("link", name=f"XSS {IMG_PAYLOAD}").is_visible()
    page.get_by_role("link", name=f"XSS {IMG_PAYLOAD}").click()
    page.get_by_text(f"body {SCRIPT_PAYLOAD}").first.wait_for()  # the click's page, once loaded
    assert page.get_by_text(f"body {SCRIPT_PAYLOAD}").first.is_visible()
    assert page.get_by_text(f"src/{IMG_PAYLOAD}.py").is_visible()
    assert page.locator("img[src=x]").count() == 0
    for url in ("/ui/sessions/ses_main", "/ui/memory"):
        page.goto(service.url + url)
        assert page.locator("img[src=x]").count() == 0
        assert page.locator("main script").count() == 0
    assert page.evaluate("typeof window.__xss") == "undefined"


def envelope_for_new_call(service: Service, session_id: str, query: str) -> str:
    """The envelope a new session's model call gets once its recall refresh has run."""
    memory = service.memory
    service.run(memory.model_call(session_id, query=query))
    service.run(memory.background.refreshed())  # type: ignore[union-attr]
    return service.run(memory.model_call(session_id, query=query))


def test_browser_search_edit_and_forget(
    page: Any, service: Service, seeded: dict[str, str]
) -> None:
    page.goto(f"{service.url}/ui/memory")
    page.get_by_label("search").fill("zebra")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name="Deploys go to the zebra-cluster").click()
    shot(page, "observation")
    page.get_by_text("Edit", exact=True).click()
    page.get_by_label("Title").fill("Deploys go to the zebra-cluster (prod only)")
    page.get_by_role("button", name="Save a new revision").click()
    page.get_by_role("heading", name="Deploys go to the zebra-cluster (prod only)").wait_for()
    assert page.get_by_text("revision 1 → 2").is_visible()
    edited = service.run(service.memory.observations.get(seeded["zebra"]))
    assert (edited.revision, edited.title) == (2, "Deploys go to the zebra-cluster (prod only)")
    page.get_by_role("link", name="Forget…").click()
    page.get_by_role("heading", name="Forget this observation?").wait_for()
    page.get_by_role("button", name="Forget it").click()
    page.get_by_role("heading", name="Forgotten").wait_for()
    page.goto(f"{service.url}/ui/memory?q=zebra")
    assert page.get_by_text("Deploys go to the zebra-cluster").count() == 0
    assert page.goto(f"{service.url}/ui/memory/{seeded['zebra']}").status == 404
    page.goto(f"{service.url}/ui/memory")
    shot(page, "memory")


def test_browser_forget_reaches_the_next_envelope(page: Any, service: Service) -> None:
    saved = service.run(
        service.memory.observations.save(
            check_draft(title="Builds run on the okapi-runner", content="CI uses okapi-runner.")
        )
    )
    query = "okapi-runner builds"
    assert "okapi-runner" in envelope_for_new_call(service, "ses_okapi_1", query)
    page.goto(f"{service.url}/ui/memory/{saved.observation.id}/forget")
    page.get_by_role("button", name="Forget it").click()
    page.get_by_role("heading", name="Forgotten").wait_for()
    assert "okapi-runner" not in envelope_for_new_call(service, "ses_okapi_2", query)


def test_browser_recall_inspector_ranks_hits(page: Any, service: Service) -> None:
    page.goto(f"{service.url}/ui/recall")
    page.get_by_label("query").fill("CSV export never commit")
    page.get_by_role("button", name="Recall").click()
    page.get_by_role("heading", name="Long-term hits").wait_for()
    first = page.locator("table").first.locator("tbody tr").first
    assert "never commit to main" in first.inner_text()
    # the score's parts: words, vectors, time, neighbours, rerank, adding up to it
    cells = [float(c) for c in first.locator("td.num").all_inner_texts()[1:7]]
    assert cells[1] > 0 and sum(cells[1:]) == pytest.approx(cells[0], abs=0.005)
    assert page.locator("img[src=x]").count() == 0
    shot(page, "recall")


def test_browser_replays_a_dead_letter(page: Any, service: Service) -> None:
    page.goto(f"{service.url}/ui/health")
    row = page.get_by_role("row").filter(has_text="A drain that failed")
    assert row.is_visible()
    shot(page, "health")
    depth = service.run(service.memory.backends.store.queue_depth())
    row.get_by_role("button", name="Replay").click()
    page.get_by_role("heading", name="Health").wait_for()
    assert page.get_by_text("No dead letters.").is_visible()
    assert service.run(service.memory.backends.store.queue_depth()) == depth + 1


def test_browser_cross_site_post_is_refused(
    page: Any, service: Service, seeded: dict[str, str]
) -> None:
    target = f"{service.url}/ui/memory/{seeded['xss']}/forget"
    attack = (
        f'<form method="post" action="{target}"><input name="csrf" value="guess"></form>'
        "<script>document.forms[0].submit()</script>"
    ).encode()

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(attack)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with page.expect_navigation(url=target):
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        assert page.get_by_role("heading", name="Cross-site request refused").is_visible()
    finally:
        server.shutdown()
        server.server_close()
    assert service.run(service.memory.observations.get(seeded["xss"])).title.startswith("XSS")


def raw_status(url: str, target: str, cookie: str) -> int:
    """The status of a GET sent as raw bytes (httpx refuses a URL this long)."""
    host = url.removeprefix("http://")
    name, _, port = host.partition(":")
    request = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"
    with socket.create_connection((name, int(port)), timeout=30) as sock:
        with contextlib.suppress(OSError):  # the server may answer before it read it all
            sock.sendall(request.encode())
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_a_search_of_a_megabyte_is_refused_and_changes_nothing(
    service: Service, seeded: dict[str, str]
) -> None:
    with httpx.Client(base_url=service.url) as client:
        client.get(service.link().removeprefix(service.url))
        before = client.get("/ui/memory")
        cookie = f"plait_viewer={client.cookies['plait_viewer']}"
        assert raw_status(service.url, f"/ui/memory?q={'x' * 1_000_000}", cookie) in (400, 413, 414)
        long = client.get("/ui/memory", params={"q": "x" * 5_000})
        assert long.status_code == 413 and "Search too long" in long.text
        assert client.get("/ui/memory").text == before.text
        assert client.get("/ui/memory/o000000000000").status_code == 404


def test_browser_forgets_a_captured_decision_of_a_session(page: Any, service: Service) -> None:
    memory = service.memory
    service.run(memory.user_turn("ses_quokka", "We decided to deploy with quokka-ship."))
    service.run(memory.user_turn("ses_quokka", "Next, write the release notes."))
    assert "quokka-ship" in service.run(memory.envelope("ses_quokka"))
    page.goto(f"{service.url}/ui/sessions/ses_quokka")
    row = page.locator("tr", has_text="deploy with quokka-ship").filter(has_text="decision")
    row.get_by_role("link", name="forget").click()
    page.get_by_role("heading", name="Forget this decision?").wait_for()
    shot(page, "forget-event")
    page.get_by_role("button", name="Forget it").click()
    page.get_by_role("heading", name="Timeline").wait_for()
    assert "quokka-ship" not in service.run(memory.envelope("ses_quokka"))


def test_browser_corrects_a_captured_decision_of_a_session(page: Any, service: Service) -> None:
    memory = service.memory
    service.run(memory.user_turn("ses_wombat", "We decided to deploy with wombat-ship."))
    page.goto(f"{service.url}/ui/sessions/ses_wombat")
    row = page.locator("tr", has_text="deploy with wombat-ship").filter(has_text="decision")
    row.get_by_role("link", name="edit").click()
    page.get_by_role("heading", name="Put this decision right").wait_for()
    page.get_by_label("corrected text").fill("We decided to deploy with numbat-ship.")
    shot(page, "edit-event")
    page.get_by_role("button", name="Save the correction").click()
    page.get_by_role("heading", name="Timeline").wait_for()
    assert page.locator("tr", has_text="numbat-ship").filter(has_text="decision").count() >= 1
    envelope = service.run(memory.envelope("ses_wombat"))
    assert "<decision>We decided to deploy with numbat-ship.</decision>" in envelope


def test_browser_draws_the_knowledge_graph_and_follows_an_entity(
    page: Any, service: Service, seeded: dict[str, str]
) -> None:
    assert service.memory.background is not None
    service.run(service.memory.background.drain())
    page.goto(f"{service.url}/ui/graph")
    page.locator("svg.graph").wait_for()
    assert page.locator("svg.graph circle").count() >= 2
    assert page.locator("svg.graph line").count() >= 1
    page.locator("svg.graph a").first.click()
    page.get_by_role("heading", name=re.compile("^Facts of ")).wait_for()
    assert page.locator("svg.graph circle.chosen").count() == 1
    assert page.locator("img[src=x]").count() == 0  # fact text is shown as text
    shot(page, "graph")
