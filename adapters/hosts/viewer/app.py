"""The viewer's routes, mounted at ``/ui`` on the service (see the package for the pages).

Every response carries a Content-Security-Policy with no inline script or style, ``nosniff``,
no framing and no referrer. Every page but the login link and the static files needs the session
cookie (401 page otherwise); every POST must come from the viewer's own origin and carry the
session's CSRF token (403 page otherwise), and is checked before anything changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from plait.adapters.hosts.viewer import pages
from plait.adapters.hosts.viewer.auth import (
    COOKIE,
    SESSION_TTL_S,
    ViewerAuth,
    ViewerSession,
    csrf_matches,
    host_allowed,
    same_origin,
)
from plait.forgetting import Selection, correct, select
from plait.forgetting import forget as forget_events
from plait.intake import ORPHAN_SETTLE_S
from plait.state.base.errors import PlaitError, UsageError
from plait.state.observations import OBSERVATION_TYPES, SCOPES, UnknownObservation, check_id

if TYPE_CHECKING:
    from plait.memory import Memory
    from plait.state.events import SessionEvent

HERE = Path(__file__).parent
PREFIX = "/ui"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
PUBLIC = ("/login", "/static/")
FORM_MAX_FIELD_CHARS = 70_000
PAGE_DIGITS_MAX = 9
SESSION_ID_MAX = 512

templates = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["when"] = lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S")
templates.globals["prefix"] = PREFIX


class ViewerError(Exception):
    """A request the viewer refuses: its status, a title and what to do."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail


def render(request: Request, name: str, code: int = 200, **values: Any) -> HTMLResponse:
    """A template rendered (autoescaped) with the session's CSRF token at hand."""
    session: ViewerSession | None = request.scope.get("viewer_session")
    page = templates.get_template(name).render(
        csrf=session.csrf if session else "", path=request.url.path, **values
    )
    return HTMLResponse(page, status_code=code)


def error_page(request: Request, status: int, title: str, detail: str) -> HTMLResponse:
    """The error page for a status (nothing was changed)."""
    return render(request, "error.html", status, status=status, title=title, detail=detail)


def memory_of(request: Request) -> Memory:
    """The open memory the viewer shows."""
    memory: Memory = request.app.state.memory
    return memory


def page_number(request: Request, name: str = "page") -> int | None:
    """A positive page number from the query string, None when absent; 400 when not one."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if not (raw.isdigit() and len(raw) <= PAGE_DIGITS_MAX and int(raw) > 0):
        raise ViewerError(400, "Bad page number", f"{name}={raw[:40]!r} is not a page number.")
    return int(raw)


async def checked_form(request: Request) -> FormData:
    """A POST's form after the origin and CSRF checks (403 page otherwise)."""
    session: ViewerSession = request.scope["viewer_session"]
    headers = {k.lower(): v for k, v in request.headers.items()}
    if not same_origin(headers, f"{request.url.scheme}://{headers.get('host', '')}"):
        raise ViewerError(403, "Cross-site request refused", "Changes come from the viewer only.")
    form = await request.form(max_files=0, max_fields=20, max_part_size=FORM_MAX_FIELD_CHARS)
    token = form.get("csrf")
    if not csrf_matches(token if isinstance(token, str) else None, session):
        raise ViewerError(403, "Form expired", "The form's CSRF token is not this session's.")
    return form


def text_field(form: FormData, name: str) -> str:
    """A form field as text ("" when absent)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""


# -- pages --------------------------------------------------------------------------------------
async def login(request: Request) -> Response:
    """Trade a one-time login token for a session cookie, then go to the sessions page."""
    auth: ViewerAuth = request.app.state.auth
    found = auth.redeem(request.query_params.get("token", ""))
    if found is None:
        detail = (
            "This login link is not valid: it was used already, it expired, or it was never "
            "issued. Run `plait ui` in the project for a new one."
        )
        return error_page(request, 403, "Login link not valid", detail)
    session_id, _ = found
    response = RedirectResponse(f"{PREFIX}/sessions", status_code=303)
    response.set_cookie(
        COOKIE,
        session_id,
        max_age=int(SESSION_TTL_S),
        path=PREFIX,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
    return response


async def logout(request: Request) -> Response:
    """End the session."""
    await checked_form(request)
    request.app.state.auth.end(request.cookies.get(COOKIE))
    response = error_page(request, 200, "Logged out", "Run `plait ui` to open the viewer again.")
    response.delete_cookie(COOKIE, path=PREFIX)
    return response


async def home(request: Request) -> Response:
    """The sessions page."""
    return RedirectResponse(f"{PREFIX}/sessions", status_code=303)


async def sessions(request: Request) -> Response:
    """Every root session of the project with its subagents."""
    values = await pages.sessions_page(memory_of(request), page_number(request))
    return render(request, "sessions.html", **values)


async def session(request: Request) -> Response:
    """One root session's timeline and envelope."""
    root = request.path_params["root"]
    if len(root) > SESSION_ID_MAX:
        raise ViewerError(404, "No such session", "No session has an id that long.")
    values = await pages.session_page(memory_of(request), root, page_number(request))
    if values is None:
        raise ViewerError(404, "No such session", f"The hot tier holds no session {root!r}.")
    return render(request, "session.html", **values)


def search_text(request: Request) -> str:
    """The ``q`` of the query string, stripped; the 413 page when it is too long."""
    query = request.query_params.get("q", "").strip()
    if len(query) > pages.SEARCH_MAX_CHARS:
        detail = f"The search is {len(query)} characters; at most {pages.SEARCH_MAX_CHARS}."
        raise ViewerError(413, "Search too long", detail)
    return query


def memory_filter(request: Request) -> pages.MemoryFilter:
    """The memory page's filters from the query string; 413/400 pages for bad ones."""
    params = request.query_params
    wanted = pages.MemoryFilter(
        query=search_text(request),
        type=params.get("type", ""),
        scope=params.get("scope", ""),
        topic=params.get("topic", "")[: pages.SEARCH_MAX_CHARS],
        file=params.get("file", "")[: pages.SEARCH_MAX_CHARS],
        superseded=params.get("all") == "1",
    )
    if wanted.type and wanted.type not in OBSERVATION_TYPES:
        raise ViewerError(400, "Unknown type", f"type={wanted.type[:40]!r} is not a type.")
    if wanted.scope and wanted.scope not in SCOPES:
        raise ViewerError(400, "Unknown scope", f"scope={wanted.scope[:40]!r} is not a scope.")
    return wanted


async def memory_list(request: Request) -> Response:
    """Observations with search and filters."""
    wanted = memory_filter(request)
    values = await pages.memory_page(memory_of(request), wanted, page_number(request) or 1)
    return render(request, "memory.html", **values)


def observation_id(request: Request) -> str:
    """The observation id of the path; 404 page when it is not one."""
    raw = request.path_params["observation_id"]
    try:
        return check_id(raw)
    except UsageError:
        raise ViewerError(404, "No such observation", f"{raw[:80]!r} is not an id.") from None


async def observation(request: Request) -> Response:
    """One observation in full."""
    values = await pages.observation_page(memory_of(request), observation_id(request))
    return render(request, "observation.html", **values)


async def edit_observation(request: Request) -> Response:
    """Change an observation's title, content or type (the old version stays a revision)."""
    wanted = observation_id(request)
    form = await checked_form(request)
    await memory_of(request).observations.update(
        wanted,
        title=text_field(form, "title"),
        content=text_field(form, "content"),
        type=text_field(form, "type") or None,
    )
    return RedirectResponse(f"{PREFIX}/memory/{wanted}", status_code=303)


async def confirm_forget(request: Request) -> Response:
    """Ask before forgetting."""
    found = await memory_of(request).observations.get(observation_id(request))
    return render(request, "forget.html", o=found)


async def forget(request: Request) -> Response:
    """Forget an observation, as ``plait memory forget`` does."""
    wanted = observation_id(request)
    await checked_form(request)
    forgotten = await memory_of(request).observations.delete(wanted)
    return render(request, "forgotten.html", o=forgotten)


async def event_selection(request: Request) -> tuple[str, Selection]:
    """The captured event a forget names (``?session=ROOT`` and the event's id); 404 pages."""
    root = request.query_params.get("session", "")
    raw = request.path_params["event_id"]
    if not raw.isdigit() or not root or len(root) > SESSION_ID_MAX:
        raise ViewerError(404, "No such event", "Name a session and one of its event numbers.")
    selection = Selection(session=root, ids=frozenset({int(raw)}))
    try:
        found = await select(memory_of(request), selection)
    except UsageError:
        found = None
    if found is None or not found.count:
        raise ViewerError(404, "No such event", f"Session {root[:80]!r} has no event #{raw}.")
    return root, selection


async def selected_event(request: Request) -> tuple[str, SessionEvent]:
    """The root session and the captured event a page names (404 pages otherwise)."""
    root, selection = await event_selection(request)
    found = await select(memory_of(request), selection)
    [event] = [e for events in found.events.values() for e in events]
    return root, event


async def confirm_forget_event(request: Request) -> Response:
    """Ask before forgetting a captured event (a decision, rule, error …) of a session."""
    root, event = await selected_event(request)
    return render(request, "forget_event.html", root=root, e=event)


async def forget_event(request: Request) -> Response:
    """Forget a captured event and every copy of it, as ``plait forget`` does."""
    root, selection = await event_selection(request)
    await checked_form(request)
    await forget_events(memory_of(request), selection)
    return RedirectResponse(f"{PREFIX}/sessions/{quote(root)}", status_code=303)


async def confirm_edit_event(request: Request) -> Response:
    """A form to put right what a captured event says."""
    root, event = await selected_event(request)
    return render(request, "edit_event.html", root=root, e=event)


async def edit_event(request: Request) -> Response:
    """Replace a captured event by its correction (the old one is forgotten everywhere)."""
    root, selection = await event_selection(request)
    form = await checked_form(request)
    [event_id] = selection.ids
    await correct(memory_of(request), root, event_id, text_field(form, "text"), source="viewer")
    return RedirectResponse(f"{PREFIX}/sessions/{quote(root)}", status_code=303)


async def graph(request: Request) -> Response:
    """The knowledge graph: its newest facts between their entities, one entity's facts."""
    try:
        limit = min(
            max(int(request.query_params.get("limit", pages.GRAPH_LIMIT)), 1), pages.GRAPH_MAX
        )
    except ValueError:
        limit = pages.GRAPH_LIMIT
    entity = request.query_params.get("entity", "")[:100]
    values = await pages.graph_page(memory_of(request), limit, entity)
    return render(request, "graph.html", **values)


async def recall(request: Request) -> Response:
    """What long-term recall finds for a query, with each hit's score."""
    values = await pages.recall_page(memory_of(request), search_text(request))
    return render(request, "recall.html", **values)


async def health(request: Request) -> Response:
    """Hot tier, spool, queue, dead letters, spend, settings."""
    values = await pages.health_page(memory_of(request), page_number(request) or 1)
    return render(request, "health.html", **values)


async def dead_action(request: Request, what: str) -> tuple[str, str]:
    """The action (replay or drop) and the id a form posts about one of ``what``; 404 else."""
    action, dead_id = request.path_params["action"], request.path_params["dead_id"]
    await checked_form(request)
    if action not in ("replay", "drop"):
        raise ViewerError(404, "Not found", f"No action {action[:40]!r} on {what}.")
    return action, dead_id


async def dead_letter(request: Request) -> Response:
    """Replay or drop one dead letter."""
    action, dead_id = await dead_action(request, "dead letters")
    store = memory_of(request).backends.store
    if not any(letter.dead_id == dead_id for letter in await store.list_dead(limit=10_000)):
        raise ViewerError(404, "No such dead letter", f"No dead letter {dead_id[:80]!r}.")
    if action == "replay":
        await store.replay_dead([dead_id])
    else:
        await store.drop_dead([dead_id])
    return RedirectResponse(f"{PREFIX}/health", status_code=303)


async def dead_call(request: Request) -> Response:
    """Replay (it runs now, as the member whose call it was) or drop one dead call."""
    action, dead_id = await dead_action(request, "dead calls")
    intake = memory_of(request).dispatch.intake
    kept = intake.dead.list_dead_calls(pages.DEAD_CALLS_MAX) if intake is not None else []
    if intake is None or not any(call.dead_id == dead_id for call in kept):
        raise ViewerError(404, "No such dead call", f"No dead call {dead_id[:80]!r}.")
    if action == "replay":
        intake.dead.replay_dead_calls([dead_id])
        # it runs now, not at the next tick; another live process's fresh spool stays its own
        intake.adopt(ORPHAN_SETTLE_S)
    else:
        intake.dead.drop_dead_calls([dead_id])
    return RedirectResponse(f"{PREFIX}/health", status_code=303)


# -- the guard ----------------------------------------------------------------------------------
Handler = Callable[[Request], Awaitable[Response]]


def guarded(handler: Handler) -> Handler:
    """Turn the viewer's refusals and plait's errors into error pages."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except ViewerError as error:
            return error_page(request, error.status, error.title, error.detail)
        except UnknownObservation as error:
            return error_page(request, 404, "No such observation", str(error))
        except UsageError as error:
            return error_page(request, 400, "Not changed", str(error))
        except PlaitError as error:
            return error_page(request, 503, "Memory is not available", str(error))

    return run


class ViewerGuard:
    """Host check, login check and security headers around every viewer request."""

    def __init__(self, app: Any, *, auth: ViewerAuth, port: Callable[[], int | None]) -> None:
        self.app = app
        self.auth = auth
        self.port = port

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Refuse what must be refused, then pass the request on with the headers added."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        request = Request(scope)
        refusal = self.refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def refusal(self, request: Request) -> Response | None:
        """The error page a request gets before it reaches a route, or None."""
        if not host_allowed(request.headers.get("host"), self.port()):
            return error_page(request, 400, "Wrong host", "The viewer answers on loopback only.")
        path = request.scope["path"].removeprefix(request.scope.get("root_path", ""))
        if path.startswith(PUBLIC):
            return None
        session = self.auth.session(request.cookies.get(COOKIE))
        if session is None:
            detail = "Run `plait ui` in the project: it prints (and opens) a login link."
            return error_page(request, 401, "Not logged in", detail)
        request.scope["viewer_session"] = session
        return None


async def not_found(request: Request, _: Exception) -> Response:
    """The 404 page for a path the viewer does not have."""
    return error_page(request, 404, "Not found", "The viewer has no such page.")


async def not_allowed(request: Request, error: Exception) -> Response:
    """The page for a method a route does not take."""
    status = error.status_code if isinstance(error, HTTPException) else 405
    return error_page(request, status, "Not allowed", "This page does not take that request.")


def viewer_app(memory: Memory, auth: ViewerAuth, port: Callable[[], int | None]) -> Any:
    """The viewer as an ASGI app to mount at :data:`PREFIX`."""
    routes = [
        Route("/", guarded(home)),
        Route("/login", guarded(login)),
        Route("/logout", guarded(logout), methods=["POST"]),
        Route("/sessions", guarded(sessions)),
        Route("/sessions/{root:path}", guarded(session)),
        Route("/memory", guarded(memory_list)),
        Route("/memory/{observation_id}", guarded(observation)),
        Route("/memory/{observation_id}/edit", guarded(edit_observation), methods=["POST"]),
        Route("/memory/{observation_id}/forget", guarded(confirm_forget)),
        Route("/memory/{observation_id}/forget", guarded(forget), methods=["POST"]),
        Route("/events/{event_id}/forget", guarded(confirm_forget_event)),
        Route("/events/{event_id}/forget", guarded(forget_event), methods=["POST"]),
        Route("/events/{event_id}/edit", guarded(confirm_edit_event)),
        Route("/events/{event_id}/edit", guarded(edit_event), methods=["POST"]),
        Route("/recall", guarded(recall)),
        Route("/graph", guarded(graph)),
        Route("/health", guarded(health)),
        Route("/health/dead/{dead_id}/{action}", guarded(dead_letter), methods=["POST"]),
        Route("/health/calls/{dead_id}/{action}", guarded(dead_call), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    app.state.memory = memory
    app.state.auth = auth
    return ViewerGuard(app, auth=auth, port=port)


__all__ = ["CSP", "PREFIX", "viewer_app"]
