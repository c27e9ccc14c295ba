"""A LangChain agent's session memory on a shared service: ``POST /v1/langchain/{action}``.

The agent runs on a team member's machine, its memory in the team's ``plait serve``
(:class:`~plait.adapters.hosts.langchain.remote.RemoteSessions` is the client the middleware uses).
The body is ``{"session_id", "messages", "query"?}``: ``messages`` are LangChain messages as
``langchain_core.messages.messages_to_dict`` writes them, those the client has not seen recorded
(the service skips any it recorded before, so sending them again is harmless); ``query`` is the
latest user request (read from ``messages`` when absent). Actions:

- ``turn``: record the new messages and answer ``{"envelope", "recorded"}``, the
  ``<session_memory>`` envelope for the model call about to be made;
- ``record``: record them without composing: ``{"recorded", "intents"}``;
- ``summary``: ``{"envelope"}`` for the summarizer about to compact the session.

``recorded`` false means plait failed open (the hot tier is down or slow): nothing was recorded
and the client sends those messages again with its next call. A body that is no request is 400,
messages plait cannot read 422 naming the one (``messages 3``), an unknown action 404, a
session another member of the project started 403. Like every route but health, these need the
bearer token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from langchain_core.messages import BaseMessage, messages_from_dict
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.adapters.hosts.http.answers import (
    dumps,
    error_detail,
    error_field,
    error_response,
    forbidden,
    read_json,
)
from plait.adapters.hosts.http.memory_routes import field_of
from plait.adapters.hosts.langchain.middleware import SessionRecorder
from plait.state.base.errors import NotYourSession, UsageError

if TYPE_CHECKING:
    from plait.memory import Memory

ACTIONS = ("turn", "record", "summary")
SESSION_ID_MAX = 200
QUERY_MAX = 100_000
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "A body that is no request."},
    404: {"description": "No such action."},
    403: {"description": "The session belongs to another member of the project."},
    422: {"description": "A message plait cannot read; it is named (``messages 3``)."},
}


class SessionRequest(BaseModel):
    """One exchange of a remote LangChain agent with its session memory."""

    model_config = ConfigDict(extra="ignore")

    session_id: str = Field(min_length=1, max_length=SESSION_ID_MAX, description="The session.")
    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="New messages, as messages_to_dict writes them."
    )
    query: str | None = Field(
        default=None, max_length=QUERY_MAX, description="The latest user request."
    )


def read_messages(raw: list[dict[str, Any]]) -> list[BaseMessage]:
    """LangChain messages from their dicts.

    Raises:
        UsageError: one cannot be read (``messages N: …``).
    """
    messages = []
    for index, item in enumerate(raw):
        try:
            messages.extend(messages_from_dict([item]))
        except (KeyError, TypeError, ValueError, ValidationError) as error:
            raise UsageError(
                f"messages {index}: not a LangChain message dict ({type(error).__name__}: {error})"
            ) from error
    return messages


async def run_action(recorder: SessionRecorder, action: str, body: bytes) -> Response:
    """Read one request, run ``action`` and answer (see the module)."""
    if action not in ACTIONS:
        return error_response(404, "unknown_action", f"no action {action!r}; {ACTIONS}", "action")
    try:
        request = SessionRequest.model_validate(read_json(body))
    except ValidationError as error:
        return error_response(400, "bad_request", error_detail(error), error_field(error))
    except ValueError as error:
        return error_response(400, "bad_request", f"Invalid JSON: {error}", "body")
    try:
        messages = read_messages(request.messages)
    except UsageError as error:
        return error_response(422, "invalid_messages", str(error), field_of(str(error)))
    try:
        answer = await answer_action(recorder, action, request, messages)
    except NotYourSession as error:
        return forbidden(error)
    return Response(dumps(answer), media_type="application/json")


async def answer_action(
    recorder: SessionRecorder, action: str, request: SessionRequest, messages: list[BaseMessage]
) -> dict[str, Any]:
    """What ``action`` answers for the session's new messages."""
    session = request.session_id
    if action == "summary":
        return {"envelope": await recorder.memory.compaction_before(session)}
    if action == "record":
        count, recorded = await recorder.recorded(session, messages)
        return {"recorded": recorded, "intents": count}
    envelope, recorded = await recorder.exchange(session, messages, request.query)
    return {"envelope": envelope, "recorded": recorded}


def add_langchain_routes(app: FastAPI, memory: Memory) -> None:
    """Attach ``POST /v1/langchain/{action}``: remote agents' session memory."""
    recorder = SessionRecorder(memory)

    @app.post(
        "/v1/langchain/{action}",
        tags=["langchain"],
        responses=ERRORS,
        summary="Record a remote LangChain agent's new messages; its session_memory envelope",
    )
    async def langchain_session(action: str, request: Request) -> Response:
        """The action's JSON answer (see the module)."""
        return await run_action(recorder, action, await request.body())


__all__ = ["ACTIONS", "SessionRequest", "add_langchain_routes", "read_messages", "run_action"]
