"""The ``memory_*`` tools over plait's HTTP service: ``POST /v1/memory/{tool}``.

The body is the tool's arguments as a JSON object (``session_id`` names the session, default
``http``); the answer is the tool's JSON, the same as the MCP server and the LangChain tools
give (:class:`~plait.observation_tools.MemoryToolbox`). Errors use the service's error body
(``{"error", "detail", "field"}``): 404 for an unknown tool or observation id, 422 for an
argument plait cannot use (the field named), 403 for the summary of a session another member
started, 503 when the hot tier is down. Like every route but
health, these need the bearer token.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from plait.adapters.hosts.http.answers import dumps, error_response, forbidden, read_json
from plait.observation_tools import TOOL_NAMES, MemoryToolbox
from plait.state.base.errors import NotYourSession, PlaitError, UsageError
from plait.state.observations import UnknownObservation

if TYPE_CHECKING:
    from plait.memory import Memory

HOST = "http"
# the tools that change what belongs to one session: only its owner may (see plait.owners)
SESSION_TOOLS = frozenset({"memory_session_summary"})
FIELD = re.compile(r"^(?P<field>[a-z_]+(?: \d+)?):")
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "The body is not a JSON object."},
    401: {"description": "No bearer token, or a wrong one."},
    403: {"description": "A session's summary, of a session another member started."},
    404: {"description": "No such tool, or no observation with that id."},
    422: {"description": "An argument plait cannot use; the field is named."},
    503: {"description": "The hot tier cannot be reached."},
}


def field_of(message: str) -> str | None:
    """The field a usage error's message starts with (``title: missing`` → ``title``)."""
    match = FIELD.match(message)
    return match["field"] if match else None


def parsed_body(body: bytes) -> dict[str, Any] | None:
    """The request's arguments (``{}`` for an empty body), or None when it is not an object."""
    if not body.strip():
        return {}
    try:
        value = read_json(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def run_tool(
    toolbox: MemoryToolbox,
    tool: str,
    body: bytes,
    admit: Callable[[str], Awaitable[None]] | None = None,
) -> Response:
    """Run one memory tool over a request body and answer JSON or an error.

    ``admit`` refuses a session the caller may not change (:data:`SESSION_TOOLS` only).
    """
    if tool not in TOOL_NAMES:
        return error_response(404, "unknown_tool", f"no memory tool {tool!r}", "tool")
    arguments = parsed_body(body)
    if arguments is None:
        return error_response(
            400, "bad_request", "the body must be a JSON object of arguments", "body"
        )
    session = str(arguments.pop("session_id", None) or HOST)
    try:
        if admit is not None and tool in SESSION_TOOLS:
            await admit(session)
        answer = await toolbox.call(tool, arguments, session)
    except NotYourSession as failure:
        return forbidden(failure)
    except UnknownObservation as failure:
        return error_response(404, "not_found", str(failure), "id")
    except UsageError as failure:
        return error_response(422, "invalid_argument", str(failure), field_of(str(failure)))
    except PlaitError as failure:
        return error_response(503, "unavailable", str(failure))
    return Response(dumps(answer), media_type="application/json")


def add_memory_routes(app: FastAPI, memory: Memory) -> None:
    """Attach ``POST /v1/memory/{tool}``: the memory's observations as tools."""
    toolbox = MemoryToolbox(memory.observations, host=HOST)
    dispatch = memory.dispatch

    async def admit(session: str) -> None:
        await dispatch.owners.admit(await dispatch.root_of(session))

    @app.post(
        "/v1/memory/{tool}",
        tags=["memory"],
        responses=ERRORS,
        summary="Run a memory tool (memory_save, memory_search, …) with its arguments",
    )
    async def memory_tool(tool: str, request: Request) -> Response:
        """The tool's JSON answer; the body holds its arguments (and ``session_id``)."""
        return await run_tool(toolbox, tool, await request.body(), admit)


__all__ = ["add_memory_routes", "run_tool"]
