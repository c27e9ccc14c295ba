"""The command-hook hosts' route: ``POST /v1/host``, where ``plait-hook`` sends each hook.

Body ``{"host", "event", "payload", "call_id"?}``: ``host`` one of :data:`COMMAND_HOSTS`,
``event`` the host's own event name, ``payload`` the JSON the host gave the hook. The host's
:class:`~plait.adapters.hosts.hook_client.host.CommandHost` reads the call; plait runs it through
its intake like an OpenCode call (the same spool, call ids and verdicts) and answers with the
JSON the host reads on the hook's stdout:

    ``200`` + the host's answer (``{}`` when plait has nothing to say); ``X-Plait-Kept``
            (``stored`` / ``spooled``) for an event that records;
    ``503`` + ``X-Plait-Kept: none``: a call that records was not kept; the client spools it;
    ``404`` unknown host or event, ``422`` a payload plait cannot use (the field named; a call
            that records is dead-lettered with the reason), ``400`` a body that is no request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.adapters.hosts.claude_code.hooks import COMMAND_HOST as CLAUDE_CODE
from plait.adapters.hosts.codex.hooks import COMMAND_HOST as CODEX
from plait.adapters.hosts.gemini.hooks import COMMAND_HOST as GEMINI
from plait.adapters.hosts.hook_client.host import HostWire
from plait.adapters.hosts.http.answers import (
    CALL_ID_MAX,
    Standbys,
    answer_call,
    error_detail,
    error_field,
    error_response,
    read_json,
)

if TYPE_CHECKING:
    from plait.memory import Memory

COMMAND_HOSTS: dict[str, HostWire] = {
    host.adapter.name: host for host in (CLAUDE_CODE, CODEX, GEMINI)
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "A body that is no request."},
    404: {"description": "Unknown host or event."},
    422: {"description": "plait cannot use the payload; names the field."},
}


class HostRequest(BaseModel):
    """One hook of a command-hook host, as ``plait-hook`` forwards it."""

    model_config = ConfigDict(extra="ignore")

    host: str = Field(
        description="The host's name (``claude-code``, ``codex``, ``gemini``).", max_length=100
    )
    event: str = Field(description="The host's event name (``SessionStart``).", max_length=100)
    payload: Any = Field(description="The JSON the host gave the hook, as it came.")
    call_id: str = Field(default="", max_length=CALL_ID_MAX, description="Recorded once.")


def read_host_request(body: bytes) -> HostRequest | Response:
    """The request, or the 400 that answers a body that is none."""
    try:
        return HostRequest.model_validate(read_json(body))
    except ValueError as error:
        if isinstance(error, ValidationError):
            return error_response(400, "bad_request", error_detail(error), error_field(error))
        return error_response(400, "bad_request", f"Invalid JSON: {error}", "body")


async def run_host_call(
    memory: Memory, request: HostRequest, standbys: Standbys | None = None
) -> Response:
    """Read, run and answer one call (see the module for the verdicts)."""
    host = COMMAND_HOSTS.get(request.host)
    if host is None:
        known = ", ".join(COMMAND_HOSTS)
        return error_response(404, "unknown_host", f"unknown host {request.host!r}; {known}")
    event, payload, call_id = request.event, request.payload, request.call_id
    return await answer_call(memory, host, event, payload, call_id, standbys)


def add_host_routes(app: FastAPI, memory: Memory) -> None:
    """Attach ``POST /v1/host`` and declare the command hosts' calls rebuildable (spool)."""
    for host in COMMAND_HOSTS.values():
        memory.dispatch.serve(host.adapter)
    standbys = Standbys.of(memory)

    @app.post(
        "/v1/host",
        tags=["hooks"],
        responses=ERROR_RESPONSES,
        summary="Run one hook of a command-hook host (Claude Code) and return its answer",
    )
    async def host_hook(request: Request) -> Response:
        """Run one forwarded hook; the body is the host's answer."""
        parsed = read_host_request(await request.body())
        if isinstance(parsed, Response):
            return parsed
        return await run_host_call(memory, parsed, standbys)


__all__ = ["COMMAND_HOSTS", "HostRequest", "add_host_routes", "run_host_call"]
