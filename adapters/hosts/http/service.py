"""plait's local HTTP service: OpenCode's plugin posts hook payloads here.

Routes:
    ``POST /v1/hooks/{name}``  body ``{"input": {...}, "output": {...}, "call_id"?: "..."}``
                               -> the mutated output.
    ``POST /v1/hooks``         body ``{"calls": [{"name", "input", "output", "call_id"}, ...]}``
                               (the plugin's outbox) -> ``{"results": [...]}``, one per call.
    ``POST /v1/memory/{tool}`` a ``memory_*`` tool, body its arguments (``memory_routes``).
    ``POST /v1/host``         a command-hook host's hook (Claude Code), from ``plait-hook``
                              (``host_routes``).
    ``GET  /v1/health``        no token needed: is the service up, and is the hot tier.
    ``POST /v1/viewer/login``  -> ``{"path": "/ui/login?token=..."}``: a one-time login link of
                               the web viewer (``plait ui``), which is served under ``/ui`` with
                               a session cookie of its own (``adapters/hosts/viewer``).
    ``GET  /openapi.json``     the schema (``/docs`` renders it).

Accepted means durable. A hook that records something (``event``, ``chat.message``,
``tool.execute.after``) is answered:
    ``200`` + ``X-Plait-Kept: stored``   what it records is in the hot tier;
    ``200`` + ``X-Plait-Kept: spooled``  it is in plait's spool on disk and is recorded later, in
                                         its session's order (the hot tier is down or behind);
    ``503`` + ``X-Plait-Kept: none``     it was NOT kept (body ``{"error": "not_kept", "detail"}``,
                                         ``X-Plait-Reason`` and ``Retry-After`` say why and when):
                                         the plugin keeps it in its outbox and sends it again.
The plugin sends a ``call_id`` with each such call (the same one on every replay): a call sent
twice, or replayed after ``plait serve`` was killed mid-batch, is recorded once. Other hooks carry
no ``X-Plait-Kept``; when they fail they fail open (``200``, the output as it came, and
``X-Plait-Warning``). In a batch each call gets the same verdict in its result: ``status``
(200, 503, or 4xx), ``kept`` (``stored``/``spooled``/``none``) and, for a call plait cannot use,
``dead_id``: a 4xx call is dead-lettered with its reason (``plait dlq``) and must not be sent again;
the calls after it run all the same. A batch's calls run concurrently, each in its session's
order. Text that is not valid Unicode (a lone UTF-16 surrogate, escaped in the JSON as U+D83D is
when ``JSON.stringify`` writes an emoji cut in half, or bytes that are not UTF-8) is replaced by
U+FFFD when the body is read; it is never an error.

``GET /v1/health`` answers 200 while the service runs (it is the liveness check that keeps a
second ``plait serve`` from starting) with ``status`` ``ok``, or ``degraded`` (and the header
``X-Plait-Status: degraded``) when the hot tier is down or calls wait in the spool: ``hot_tier``
(``up``/``down``), ``restarts`` of the embedded server, ``queue_depth`` and ``queue_lag_s`` of the
drain, ``spool_pending``, ``dead_calls``, ``lanes`` (how long the newest host calls waited in
their session's lane and ran, p50 and p99 ms); with the bearer token also the reasons
(``degraded``).

Every other route needs ``Authorization: Bearer <token>``; the token is checked (constant time)
before the body is read, so an unauthenticated request records nothing. The body limit is enforced
while reading, before any parsing (413).

Files in the data dir (the contract with the OpenCode plugin,
see ``adapters/hosts/opencode/plait.ts``):
    ``<data_dir>/token``                      the bearer token, mode 0600, created on first use.
    ``<data_dir>/services/<project_key>.json`` ``{"url", "host", "port", "pid", "project_dir",
                                              "version"}`` while a service for that project runs.
    ``project_key`` is the first 16 hex digits of sha256 of the project's real path (utf-8).
Environment (read by the plugin): ``PLAIT_URL`` and ``PLAIT_TOKEN`` override both files;
``PLAIT_DATA_DIR`` names the data dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import math
import os
import secrets
import signal
import socket
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pydantic_core
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.telemetry import TelemetryConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.adapters.hosts.hook_client._client import is_loopback
from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.http.answers import (
    CALL_ID_MAX,
    KEPT_HEADER,
    REASON_HEADER,
    WARNING_HEADER,
    ErrorBody,
    Standbys,
    answer_call,
    dumps,
    error_detail,
    error_field,
    error_response,
    read_json,
)
from plait.adapters.hosts.http.host_routes import add_host_routes
from plait.adapters.hosts.http.lifecycle import IdleClock
from plait.adapters.hosts.http.memory_routes import add_memory_routes
from plait.adapters.hosts.http.team import TeamTokens
from plait.adapters.hosts.langchain.service_routes import add_langchain_routes
from plait.adapters.hosts.opencode.hooks import (
    OPENCODE,
    opencode_project_standby,
    opencode_standby,
)
from plait.adapters.hosts.opencode.hooks import WIRE as OPENCODE_WIRE
from plait.adapters.hosts.opencode.outbox import outbox_path, watch_left_outbox
from plait.adapters.hosts.viewer import PREFIX as VIEWER_PREFIX
from plait.adapters.hosts.viewer import ViewerAuth, viewer_app
from plait.state.base.errors import ConfigError
from plait.state.base.processes import pid_alive
from plait.state.base.redact import redacted_logger
from plait.state.groups import acting_as, project_key

if TYPE_CHECKING:
    from plait.memory import Memory

logger = redacted_logger("plait")

TOKEN_FILE = "token"
SERVICES_DIR = "services"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 0
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_BATCH_CALLS = 500
STATUS_HEADER = "x-plait-status"
PUBLIC_PATHS = frozenset({"/v1/health", "/openapi.json", "/docs", "/docs/oauth2-redirect"})
SERVICE_VERSION = "1"
NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# -- request and response models ----------------------------------------------------------------
class HookRequest(BaseModel):
    """One OpenCode hook call: the two objects OpenCode passed to the hook."""

    model_config = ConfigDict(extra="ignore")

    input: dict[str, Any] = Field(description="The hook's first argument, as OpenCode passed it.")
    output: dict[str, Any] = Field(
        description="The hook's second argument (mutable); ``{}`` for ``event``."
    )
    call_id: str = Field(
        default="",
        max_length=CALL_ID_MAX,
        description="The plugin's id of this call, the same on every replay: recorded once.",
    )


class BatchCall(HookRequest):
    """One hook call inside a batch."""

    name: str = Field(description="The hook name, e.g. ``event`` or ``tool.execute.after``.")


class BatchRequest(BaseModel):
    """Several hook calls delivered late (the plugin's outbox), each in its session's order."""

    calls: list[BatchCall] = Field(max_length=MAX_BATCH_CALLS)


class BatchResult(BaseModel):
    """What happened to one call of a batch (see the module for ``status`` and ``kept``)."""

    status: int
    output: dict[str, Any] | None = None
    error: str | None = None
    field: str | None = None
    kept: str | None = None
    dead_id: str | None = None


class BatchResponse(BaseModel):
    """One result per call, in order."""

    results: list[BatchResult]


class Health(BaseModel):
    """``GET /v1/health``: the service runs (200); ``status`` says whether all is well."""

    status: Literal["ok", "degraded"] = "ok"
    service: str = "plait"
    version: str = SERVICE_VERSION
    hot_tier: Literal["up", "down"] | None = None
    down_since: str | None = None
    restarts: int | None = None
    queue_depth: int | None = None
    queue_lag_s: float | None = None
    spool_pending: int | None = None
    dead_calls: int | None = None
    lanes: dict[str, int | float] | None = Field(
        default=None,
        description="How long the newest host calls waited in their session's lane and ran, "
        "ms (wait_p50, wait_p99, run_p50, run_p99, and how many runs: runs).",
    )
    degraded: list[str] | None = Field(
        default=None, description="Why it is degraded (only with the bearer token)."
    )


# -- pure helpers -------------------------------------------------------------------------------
def bearer_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token of an ``Authorization: Bearer`` header in raw ASGI headers, if any."""
    for key, value in headers:
        if key.lower() == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
            return None
    return None


def token_matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token against the expected one."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The ``Content-Length`` header as an int, None when absent or not a number."""
    for key, value in headers:
        if key.lower() == b"content-length":
            with contextlib.suppress(ValueError):
                return int(value)
            return None
    return None


def read_hook_body(body: bytes) -> dict[str, Any] | Response:
    """A hook request's JSON object, or the 400 that answers a body that is none.

    Parsed fast, or, when that fails, read again with its text repaired; OpenCode's wire reads
    its fields (a missing ``input`` is a 422 naming it).
    """
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        try:
            raw = read_json(body)
        except ValueError as error:
            return error_response(400, "bad_request", f"Invalid JSON: {error}", "body")
    if not isinstance(raw, dict):
        return error_response(400, "bad_request", "the body must be a JSON object", "body")
    call_id = raw.get("call_id", "")
    if not isinstance(call_id, str) or len(call_id) > CALL_ID_MAX:
        detail = f"a string of at most {CALL_ID_MAX} characters"
        return error_response(400, "bad_request", detail, "call_id")
    return raw


# -- ASGI guards (outermost first: token, then size) --------------------------------------------
async def send_plain_error(
    send: Send, status: int, error: str, detail: str, retry_after_s: int | None = None
) -> None:
    """Answer a raw ASGI request with a JSON error without touching the app."""
    body = dumps({"error": error, "detail": detail})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if retry_after_s is not None:
        headers.append((b"retry-after", str(retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def public_path(path: str) -> bool:
    """Whether a path needs no bearer token: health, the schema, and the viewer (own login)."""
    return path in PUBLIC_PATHS or path == VIEWER_PREFIX or path.startswith(VIEWER_PREFIX + "/")


class BearerTokenGuard:
    """Rejects a non-public HTTP request without the owner's token or an admitted user's.

    401 for no token, a wrong one or a revoked one; 403 for another project's; 429 over its rate.
    """

    def __init__(self, app: ASGIApp, *, token: str, team: TeamTokens | None = None) -> None:
        self.app = app
        self.token = token
        self.team = team

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token, then pass the request on."""
        if scope["type"] == "http" and not public_path(scope["path"]):
            given = bearer_token(scope.get("headers", []))
            if not token_matches(given, self.token):
                if self.team is None:
                    await send_plain_error(
                        send, 401, "unauthorized", "missing or wrong bearer token"
                    )
                    return
                record, refusal = self.team.admit(given)
                if refusal is not None:
                    await send_plain_error(
                        send, refusal.status, refusal.error, refusal.detail, refusal.retry_after_s
                    )
                    return
                member = record.user if record is not None else None
                with acting_as(member):  # a member's personal memory is theirs alone
                    await self.app(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodySizeGuard:
    """Reads at most ``max_body_bytes`` of a request body; more is 413 before any parsing."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer the body within the limit and replay it to the app."""
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        length = declared_length(scope.get("headers", []))
        if length is not None and length > self.max_body_bytes:
            await self._too_large(send)
            return
        body = await self._read(receive)
        if body is None:
            await self._too_large(send)
            return
        await self.app(scope, replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _too_large(self, send: Send) -> None:
        detail = f"request body exceeds {self.max_body_bytes} bytes"
        await send_plain_error(send, 413, "payload_too_large", detail)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one."""
    sent = False

    async def receive_again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again


# -- the app ------------------------------------------------------------------------------------
async def run_hook(
    memory: Memory,
    wire: HostWire,
    name: str,
    body: dict[str, Any],
    standbys: Standbys | None = None,
) -> Response:
    """One OpenCode hook through the corridor (:func:`~.answers.answer_call`)."""
    return await answer_call(memory, wire, name, body, body.get("call_id") or "", standbys)


async def run_batch_call(memory: Memory, wire: HostWire, raw: Any) -> BatchResult:
    """Run one call of a batch and describe the outcome; a call plait cannot use is buried."""
    call_id = str(raw.get("call_id", "")) if isinstance(raw, dict) else ""
    try:
        call = BatchCall.model_validate(raw)
    except ValidationError as error:
        field = error_field(error)
        reason = f"{field}: {error_detail(error)}"
        kept = raw if isinstance(raw, dict) else {"call": raw}
        dead_id = memory.dispatch.reject(
            call_id=call_id, host=OPENCODE.name, call=kept, reason=reason
        )
        return BatchResult(status=422, error=reason, field=field, dead_id=dead_id)
    body = {"input": call.input, "output": call.output, "call_id": call.call_id}
    response = await run_hook(memory, wire, call.name, body)
    payload = json.loads(bytes(response.body))
    kept_header = response.headers.get(KEPT_HEADER)
    if response.status_code == 200:
        warning = response.headers.get(WARNING_HEADER)
        return BatchResult(status=200, output=payload, error=warning, kept=kept_header)
    return BatchResult(
        status=response.status_code,
        error=payload.get("detail"),
        field=payload.get("field"),
        kept=kept_header,
        dead_id=payload.get("dead_id"),
    )


def read_batch(body: bytes) -> list[Any] | Response:
    """The calls of a batch body, or the 400 that answers it."""
    try:
        raw = read_json(body)
    except ValueError as error:
        return error_response(400, "bad_request", f"Invalid JSON: {error}", "body")
    calls = raw.get("calls") if isinstance(raw, dict) else None
    if not isinstance(calls, list):
        return error_response(400, "bad_request", "Field required (a list)", "calls")
    if len(calls) > MAX_BATCH_CALLS:
        detail = f"at most {MAX_BATCH_CALLS} calls in a batch"
        return error_response(400, "bad_request", detail, "calls")
    return calls


async def health_of(memory: Memory, trusted: bool) -> Health:
    """What ``/v1/health`` says: the hot tier as the supervisor sees it, the spool, dead calls."""
    tier = memory.dispatch.supervisor.health()
    intake = memory.dispatch.intake
    pending = intake.stats().pending if intake is not None else None
    dead = await asyncio.to_thread(intake.dead_count) if intake is not None else None
    timings = intake.lane_timings() if intake is not None else None
    reasons = list(memory.degraded)
    return Health(
        status="degraded" if reasons or not tier.up else "ok",
        hot_tier="up" if tier.up else "down",
        down_since=tier.down_since.isoformat() if tier.down_since else None,
        restarts=tier.restarts,
        queue_depth=tier.queue_depth,
        queue_lag_s=tier.queue_lag_s,
        spool_pending=pending,
        dead_calls=dead,
        lanes=asdict(timings) if timings is not None else None,
        degraded=reasons if trusted else None,
    )


def hook_request_schema(model: type[BaseModel] = HookRequest) -> dict[str, Any]:
    """OpenAPI ``requestBody`` for a hook route (the body is parsed by hand: repaired text)."""
    schema = model.model_json_schema()
    return {"required": True, "content": {"application/json": {"schema": schema}}}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Malformed JSON or a missing/invalid field."},
    401: {"model": ErrorBody, "description": "No bearer token, or a wrong one."},
    404: {"model": ErrorBody, "description": "Unknown hook name."},
    413: {"model": ErrorBody, "description": "Body over the limit."},
    422: {"model": ErrorBody, "description": "plait cannot use the payload; names the field."},
}


def envelope_answer(host: HostWire, event: str, payload: Any, kept: bytes) -> Any:
    """OpenCode's answer with a kept envelope put first in the last user message."""
    return host.answer(event, payload, {"inject": kept.decode("utf-8", "replace")})


def add_routes(app: FastAPI, memory: Memory, wire: HostWire) -> None:
    """Attach the health, hook and batch routes."""
    standbys = Standbys.of(
        memory,
        keep=opencode_standby,
        stand_in=envelope_answer,
        keep_project=opencode_project_standby,
    )

    @app.get("/v1/health", response_model=Health, tags=["service"])
    async def health(request: Request) -> Response:
        """200 while the service runs; ``status`` ``degraded`` when the hot tier is not well."""
        token = bearer_token(request.scope.get("headers", []))
        trusted = token_matches(token, getattr(app.state, "token", ""))
        found = await health_of(memory, trusted)
        headers = {STATUS_HEADER: found.status}
        body = found.model_dump(exclude_none=True)
        return Response(dumps(body), media_type="application/json", headers=headers)

    @app.post(
        "/v1/hooks/{name}",
        tags=["hooks"],
        responses=ERROR_RESPONSES,
        openapi_extra={"requestBody": hook_request_schema()},
        summary="Run one OpenCode hook and return its mutated output",
    )
    async def hook(name: str, request: Request) -> Response:
        """Run ``name`` over ``{input, output}``; the response body is the mutated ``output``."""
        parsed = read_hook_body(await request.body())
        if isinstance(parsed, Response):
            return parsed
        return await run_hook(memory, wire, name, parsed, standbys)

    @app.post(
        "/v1/hooks",
        tags=["hooks"],
        response_model=BatchResponse,
        responses=ERROR_RESPONSES,
        openapi_extra={"requestBody": hook_request_schema(BatchRequest)},
        summary="Run several hook calls in order (late delivery from the plugin's outbox)",
    )
    async def hooks(request: Request) -> Response:
        """Run every call, each in its session's order; one call's failure stops no other."""
        calls = read_batch(await request.body())
        if isinstance(calls, Response):
            return calls
        # tasks start in order, and each takes its place in its session's lane before it waits
        results = await asyncio.gather(*(run_batch_call(memory, wire, call) for call in calls))
        body = BatchResponse(results=list(results)).model_dump(exclude_none=True)
        return Response(dumps(body), media_type="application/json")


def add_viewer(app: FastAPI, memory: Memory) -> None:
    """Mount the web viewer at ``/ui`` and the route that issues its login links."""
    auth = ViewerAuth()
    app.state.viewer_auth = auth
    app.mount(VIEWER_PREFIX, viewer_app(memory, auth, lambda: app.state.port))

    @app.post(
        "/v1/viewer/login",
        tags=["viewer"],
        summary="A one-time login link of the viewer (the owner's token only)",
        responses={403: {"model": ErrorBody, "description": "A team member's token."}},
    )
    async def viewer_login(request: Request) -> Response:
        """A login link, good once for ten minutes (``plait ui`` prints and opens it).

        Only the owner's token gets one: the viewer shows personal memory too.
        """
        given = bearer_token(request.scope.get("headers", []))
        if not token_matches(given, app.state.token):
            return error_response(403, "forbidden", "the viewer is for the owner's token only")
        path = f"{VIEWER_PREFIX}/login?token={auth.issue_link()}"
        return Response(dumps({"path": path}), media_type="application/json")


def create_app(
    memory: Memory,
    *,
    token: str,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    team: TeamTokens | None = None,
    opencode: HostWire = OPENCODE_WIRE,
) -> FastAPI:
    """The service as an ASGI app: token guard, then size guard, then FastAPI routes.

    Args:
        memory: the open :class:`plait.Memory` whose calls it answers.
        token: the bearer token every non-public request must carry.
        max_body_bytes: request bodies over this size are refused with 413.
        team: users' tokens (``plait token``) admitted beside the owner's, if any.
        opencode: how OpenCode's calls are read and answered (a test may record them).
    """
    if not token:
        raise ValueError("the service needs a non-empty token")
    app = FastAPI(
        title="plait",
        version=SERVICE_VERSION,
        summary="Memory layer for AI coding agents: OpenCode hook endpoint.",
        redoc_url=None,
        # FastAPI's own OpenTelemetry looks for the process's providers on every request (about
        # a tenth of a small hook's time in the service); plait configures none
        telemetry=NO_TELEMETRY,
    )
    app.state.memory = memory
    app.state.token = token
    app.state.port = None

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0] if error.errors() else {}
        location = [str(part) for part in first.get("loc", ()) if part != "body"]
        field = "body" if first.get("type") == "json_invalid" else ".".join(location) or "body"
        detail = str(first.get("msg", "invalid request"))
        body = ErrorBody(error="bad_request", detail=detail, field=field)
        return JSONResponse(body.model_dump(exclude_none=True), status_code=400)

    memory.dispatch.serve(OPENCODE)
    add_routes(app, memory, opencode)
    add_memory_routes(app, memory)
    add_host_routes(app, memory)
    add_langchain_routes(app, memory)
    add_viewer(app, memory)
    app.add_middleware(BodySizeGuard, max_body_bytes=max_body_bytes)
    app.add_middleware(BearerTokenGuard, token=token, team=team)
    return app


# -- token and service files --------------------------------------------------------------------
def load_or_create_token(data_dir: Path | str) -> str:
    """The service token in ``<data_dir>/token``, created (mode 0600) when missing.

    An existing file whose mode lets others read it is tightened to 0600.
    """
    directory = Path(data_dir)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / TOKEN_FILE
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
        path.unlink()
        return load_or_create_token(directory)
    token = secrets.token_urlsafe(32)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


@dataclass(frozen=True, kw_only=True)
class ServiceInfo:
    """What ``<data_dir>/services/<project_key>.json`` says about a running service."""

    url: str
    host: str
    port: int
    pid: int
    project_dir: str
    version: str = SERVICE_VERSION


def service_file(data_dir: Path | str, project_dir: Path | str) -> Path:
    """Where the service for ``project_dir`` announces itself."""
    return Path(data_dir) / SERVICES_DIR / f"{project_key(project_dir)}.json"


def write_service_file(data_dir: Path | str, info: ServiceInfo) -> Path:
    """Announce a running service (atomic replace, mode 0600)."""
    path = service_file(data_dir, info.project_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(info), handle)
    temporary.replace(path)
    return path


def read_service_file(data_dir: Path | str, project_dir: Path | str) -> ServiceInfo | None:
    """The announced service for a project, None when there is none or the file is unreadable."""
    path = service_file(data_dir, project_dir)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return ServiceInfo(**raw)
    except (OSError, ValueError, TypeError):
        return None


def remove_service_file(data_dir: Path | str, info: ServiceInfo) -> None:
    """Withdraw the announcement if it is still ours."""
    current = read_service_file(data_dir, info.project_dir)
    if current is not None and current.pid == info.pid:
        service_file(data_dir, info.project_dir).unlink(missing_ok=True)


def running_service(
    data_dir: Path | str, project_dir: Path | str, *, timeout: float = 0.5
) -> ServiceInfo | None:
    """The service announced for a project if it answers its health check, else None.

    ``plait serve`` calls this first and exits 0 when one already runs (the plugin may try to
    start the service from several OpenCode processes at once).
    """
    import httpx

    info = read_service_file(data_dir, project_dir)
    if info is None or not pid_alive(info.pid):
        return None
    try:
        response = httpx.get(f"{info.url}/v1/health", timeout=timeout)
    except httpx.HTTPError:
        return None
    return info if response.status_code == 200 else None


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; port 0 or a taken port picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if os.name != "nt":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        if port == 0:
            sock.close()
            raise
        logger.warning("plait: port %d on %s is taken; using a free port", port, host)
        sock.bind((host, 0))
    if family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(128)
    sock.setblocking(False)
    return sock


@contextlib.contextmanager
def announced(data_dir: Path | str, info: ServiceInfo) -> Iterator[Path]:
    """Write the service file for the duration of the block."""
    path = write_service_file(data_dir, info)
    try:
        yield path
    finally:
        remove_service_file(data_dir, info)


def quiet_server(config: Any, *, signals: bool = True) -> Any:
    """A uvicorn server that stops on SIGTERM or SIGINT and then returns normally.

    uvicorn re-raises the signal once it has stopped, which ends the process before the code
    around :func:`serve` can close the memory and release the embedded server; this one
    does not, so ``plait serve`` cleans up and exits 0. ``signals=False``: it takes no signal
    (several servers in one process: the process stops them, see :mod:`.user_service`).
    """
    import uvicorn

    class QuietServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if not signals:
                yield
                return
            with super().capture_signals():
                yield

    return QuietServer(config)


async def warm_up(memory: Memory) -> None:
    """Ready the process for its first calls once it listens (:meth:`Dispatch.warm_up`).

    Then what is alive (modules, classes, compiled graphs) lives as long as the process, so it
    is moved out of the collector's way (``gc.freeze``): each full collection walked it, a pause
    of about 160 ms every 1.6 s under load. Once per process: a process serving several projects
    would otherwise keep for ever what each project that stopped left.
    """
    await memory.dispatch.warm_up()
    if not gc.get_freeze_count():
        gc.collect()  # what is garbage now is not kept for ever
        gc.freeze()


async def exit_when_set(server: Any, stop: asyncio.Event) -> None:
    """Ask ``server`` to stop once ``stop`` is set."""
    await stop.wait()
    server.should_exit = True


async def exit_when_idle(server: Any, clock: IdleClock, idle_exit_s: float) -> None:
    """Ask ``server`` to stop once no request has come for ``idle_exit_s`` seconds."""
    while not server.should_exit:
        idle = clock.idle_for()
        if idle >= idle_exit_s:
            logger.info("plait: no hook for %.0f s; stopping", idle)
            server.should_exit = True
            return
        await asyncio.sleep(min(idle_exit_s - idle, 5.0) + 0.05)


async def serve(
    memory: Memory,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str = "",
    *,
    data_dir: Path | str,
    project_dir: Path | str,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    log_level: str = "warning",
    idle_exit_s: float = 0,
    team: TeamTokens | None = None,
    tls: tuple[Path, Path] | None = None,
    behind_proxy: bool = False,
    opencode: HostWire = OPENCODE_WIRE,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve the app with uvicorn until stopped; announce it in the data dir meanwhile.

    It stops on SIGTERM or SIGINT (returning normally) and, with ``idle_exit_s``, after that
    many seconds without a request other than the health check.

    Args:
        memory: the open :class:`plait.Memory` whose calls it answers.
        host: where to bind; loopback by default, anything else logs a warning.
        port: preferred port; a taken port falls back to a free one (see the service file).
        token: the bearer token; empty reads or creates ``<data_dir>/token``.
        data_dir: plait's data dir (the token and the service file live there).
        project_dir: the project served.
        max_body_bytes: the request body limit.
        log_level: uvicorn's log level.
        idle_exit_s: stop after this long without a hook; 0 never stops.
        team: users' tokens admitted beside the owner's (``plait token``).
        tls: certificate and key files; the service then speaks HTTPS.
        behind_proxy: a proxy in front terminates TLS, so plain HTTP beyond loopback is allowed.
        opencode: how OpenCode's calls are read and answered (a test may record them).
        stop: set, the service stops; given, it takes no signal itself (its process does).

    Raises:
        ConfigError: ``host`` is not loopback and there is neither TLS nor a proxy in front.
    """
    import uvicorn

    token = token or load_or_create_token(data_dir)
    if not is_loopback(host):
        if tls is None and not behind_proxy:
            raise ConfigError(
                f"service.host {host!r} is reachable beyond this machine: set service.tls_cert "
                "and service.tls_key, or service.behind_proxy = true when a proxy terminates TLS"
            )
        logger.warning("plait: serving on %s, reachable beyond this machine", host)
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    app = create_app(
        memory, token=token, max_body_bytes=max_body_bytes, team=team, opencode=opencode
    )
    app.state.port = bound_port
    clock = IdleClock(app, quiet_paths=PUBLIC_PATHS)
    # log_config=None: uvicorn's records go to the process's handlers (redacted ones under
    # ``plait serve``), not to handlers of its own.
    certificate, key = tls if tls is not None else (None, None)
    config = uvicorn.Config(
        clock,
        log_level=log_level,
        lifespan="off",
        access_log=False,
        log_config=None,
        ssl_certfile=certificate,
        ssl_keyfile=key,
    )
    server = quiet_server(config, signals=stop is None)
    url_host = f"[{host}]" if ":" in host else host
    info = ServiceInfo(
        url=f"{'https' if tls else 'http'}://{url_host}:{bound_port}",
        host=host,
        port=bound_port,
        pid=os.getpid(),
        project_dir=os.path.realpath(os.fspath(project_dir)),
    )
    watchdogs = [asyncio.ensure_future(exit_when_idle(server, clock, idle_exit_s or math.inf))]

    async def run_left(raw: Any) -> int:
        return (await run_batch_call(memory, opencode, raw)).status

    # what OpenCode left in the plugin's outbox as it exited goes now, not at its next run
    outbox = outbox_path(Path(data_dir), Path(project_dir))
    watchdogs.append(asyncio.ensure_future(watch_left_outbox(outbox, run_left)))
    if stop is not None:
        watchdogs.append(asyncio.ensure_future(exit_when_set(server, stop)))
    watchdogs.append(asyncio.ensure_future(warm_up(memory)))
    try:
        with announced(data_dir, info):
            await server.serve(sockets=[sock])
    finally:
        for watchdog in watchdogs:
            watchdog.cancel()
        # a serve cancelled from outside never reaches uvicorn's shutdown: stop listening here
        for listening in getattr(server, "servers", ()):
            listening.close()
        sock.close()


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PORT",
    "KEPT_HEADER",
    "REASON_HEADER",
    "STATUS_HEADER",
    "TOKEN_FILE",
    "WARNING_HEADER",
    "BatchRequest",
    "BatchResponse",
    "HookRequest",
    "ServiceInfo",
    "create_app",
    "load_or_create_token",
    "project_key",
    "read_service_file",
    "remove_service_file",
    "running_service",
    "serve",
    "warm_up",
    "service_file",
    "write_service_file",
]
