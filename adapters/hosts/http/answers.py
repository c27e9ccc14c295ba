"""One host call over HTTP, from the host's request to the response: the service's corridor.

Every hook route (OpenCode's ``/v1/hooks``, the command hosts' ``/v1/host``) runs a call the
same way, in :func:`answer_call`:

1. the host's folder reads the request into a :class:`~plait.state.intents.HostCall`
   (:attr:`HostWire.call`): an event plait does not take is ``404``, a payload it cannot use
   ``422`` naming the field (a call that records is dead-lettered with the reason);
2. :meth:`plait.dispatch.Dispatch.answer` runs it and decides, once, whether it went through,
   was kept for later, or failed open: an :class:`~plait.intake.Answer`;
3. the answer becomes the response (:func:`respond`): a call that records and was not kept is
   ``503`` (the host keeps it and sends it again), anything else ``200`` with the body the host
   reads (:attr:`HostWire.answer`), ``X-Plait-Kept`` for a call that records, and
   ``X-Plait-Reason``/``X-Plait-Warning`` when it failed open.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic_core
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from plait.adapters.hosts.hook_client.host import HostWire
from plait.state.base.errors import NotYourSession, UnknownHook, UsageError
from plait.state.base.standby import keep_answer, standby_answer
from plait.state.events import repaired
from plait.state.groups import acting_member, project_key
from plait.state.intents import ModelCall, SessionLifecycle, SessionTarget

if TYPE_CHECKING:
    from plait.intake import Answer
    from plait.memory import Memory
    from plait.state.intents import HostCall

LOG = logging.getLogger(__name__)
WARNING_HEADER = "x-plait-warning"
KEPT_HEADER = "x-plait-kept"
REASON_HEADER = "x-plait-reason"
NOT_KEPT = "none"
RETRY_AFTER_S = 1
HEADER_MAX = 300
CALL_ID_MAX = 200
# How long a model call that failed open may wait for the session's current envelope.
STAND_IN_S = 0.1


class ErrorBody(BaseModel):
    """Every error response: a code, a message and the offending field when there is one."""

    error: str
    detail: str
    field: str | None = None
    dead_id: str | None = None


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (pydantic-core's serializer, fast on big message lists)."""
    return pydantic_core.to_json(value)


def read_json(body: bytes) -> Any:
    """A request body's JSON, any text that is not valid Unicode replaced (U+FFFD).

    Raises :class:`ValueError` for a body that is not JSON.
    """
    return repaired(json.loads(body.decode("utf-8", errors="replace")))


def error_field(error: ValidationError) -> str:
    """A dotted path naming the first invalid field of a validation error (``body`` for JSON)."""
    first = error.errors()[0]
    if first.get("type") == "json_invalid":
        return "body"
    location = [str(part) for part in first.get("loc", ())]
    return ".".join(location) or "body"


def error_detail(error: ValidationError) -> str:
    """The first validation error's message."""
    return str(error.errors()[0].get("msg", "invalid"))


def header_text(text: str) -> str:
    """``text`` as a header value: one line of ASCII, at most :data:`HEADER_MAX` characters."""
    flat = " ".join(text.split())
    return flat.encode("ascii", errors="replace").decode("ascii")[:HEADER_MAX]


def error_response(
    status: int, error: str, detail: str, field: str | None = None, dead_id: str | None = None
) -> Response:
    """A JSON error response in the :class:`ErrorBody` shape."""
    found = ErrorBody(error=error, detail=detail, field=field, dead_id=dead_id)
    body = found.model_dump(exclude_none=True)
    return Response(dumps(body), status_code=status, media_type="application/json")


def not_kept(reason: str) -> Response:
    """503: a call that records was not kept; the host keeps it and sends it again."""
    headers = {
        KEPT_HEADER: NOT_KEPT,
        REASON_HEADER: header_text(reason),
        "retry-after": str(RETRY_AFTER_S),
    }
    body = ErrorBody(error="not_kept", detail=reason).model_dump()
    return Response(dumps(body), status_code=503, media_type="application/json", headers=headers)


def respond(call: HostCall, answer: Answer, body: Any) -> Response:
    """The response to a call that ran, was kept, or failed open (see the module)."""
    if call.durable and not answer.kept:
        return not_kept(answer.reason or "not kept")
    headers: dict[str, str] = {KEPT_HEADER: answer.kept} if call.durable else {}
    if answer.reason:
        headers[REASON_HEADER] = header_text(answer.reason)
        if not call.durable:
            headers[WARNING_HEADER] = header_text(f"hook failed open: {answer.reason}")
    return Response(dumps(body), media_type="application/json", headers=headers)


def refuse(
    memory: Memory, host: HostWire, event: str, payload: Any, call_id: str, error: Exception
) -> Response:
    """404 for an event plait does not take, 403 for another member's session, else 422.

    A call that records is dead-lettered when its payload is unusable.
    """
    if isinstance(error, NotYourSession):
        return forbidden(error)
    if isinstance(error, UnknownHook):
        return error_response(404, "unknown_hook", str(error), getattr(error, "field", "") or None)
    field = getattr(error, "field", "") or None
    dead_id = None
    if event in host.keep_events:  # a call that records: kept where a person sees it
        call = {"event": event, "payload": payload}
        dead_id = memory.dispatch.reject(
            call_id=call_id, host=host.adapter.name, call=call, reason=str(error)
        )
    return error_response(422, "invalid_hook_payload", str(error), field, dead_id)


def forbidden(error: NotYourSession) -> Response:
    """403: a team member named a session another member started."""
    return error_response(403, error.code, str(error), "session_id")


def whole(event: str, body: Any, output: Mapping[str, Any]) -> bytes | None:
    """A command-hook host's answer is kept whole: it is what its hook prints."""
    return dumps(body)


def as_answer(host: HostWire, event: str, payload: Any, kept: bytes) -> Any:
    """A kept command-hook answer, sent again as it was."""
    return json.loads(kept)


@dataclass(frozen=True, kw_only=True)
class Standbys:
    """The last memory each session got, kept to stand in when a call cannot give it.

    Each answer that went through is kept (:mod:`plait.state.base.standby`; a new session's
    is the project's too): the host's client gives it while no service runs, and the service
    itself while the hot tier does not answer (a call that failed open). ``keep`` says what of
    an answer to keep (from the host's body or plait's output, as they are: nothing is parsed
    again); ``stand_in`` makes the body to send from what was kept; ``keep_project`` the
    project's part of any answer, for a host whose session starts plait does not answer.
    A team member's answers are kept under the member's name and stand in for that member
    only; the project's answer (the service owner's) never stands in for a member.
    """

    data_dir: str
    project_key: str
    keep: Callable[[str, Any, Mapping[str, Any]], bytes | None] = whole
    stand_in: Callable[[HostWire, str, Any, bytes], Any] = as_answer
    # the project's part of any session's answer (a host with no answered session start)
    keep_project: Callable[[str, Any, Mapping[str, Any]], bytes | None] | None = None

    @classmethod
    def of(cls, memory: Memory, **how: Any) -> Standbys:
        """The standbys of ``memory``'s project."""
        data, key = str(memory.settings.resolved_data_dir()), project_key(memory.project_dir)
        return cls(data_dir=data, project_key=key, **how)

    def kept(self, call: HostCall, event: str, body: Any, output: Mapping[str, Any]) -> None:
        """Keep what stands in for this answer: a model call's (a tool's is about its file)."""
        if not asks_for_memory(call):
            return
        kept = self.keep(event, body, output)
        root = root_of(call)
        if kept is None or root is None:
            return
        # a member's answers are theirs alone: kept under their name, never as the project's
        member = acting_member() is not None
        new = any(isinstance(i, SessionLifecycle) and i.phase == "created" for i in call.payload)
        project = self.keep_project(event, body, output) if self.keep_project else None
        host, data, key = call.host.name, self.data_dir, self.project_key
        try:
            keep_answer(data, key, host, whose(root), event, kept, project_wide=new and not member)
            if project and not member:
                keep_answer(data, key, host, "", event, project)
        except OSError as error:  # the answer went out; only its standby copy is missing
            LOG.warning("standby answer not kept: %s", error)

    async def answer(
        self, memory: Memory, host: HostWire, call: HostCall, event: str, payload: Any
    ) -> Any | None:
        """The body that stands in for a call that failed open, if any memory can.

        A model call first gets the session's current envelope from the hot tier, in one read
        that waits no longer than :data:`STAND_IN_S` (its lane was behind, or the graph slow);
        else, or for another call, the standby answer kept on disk.
        """
        root = root_of(call)
        if root is None:
            return None
        if asks_for_memory(call):
            envelope = await current_envelope(memory, root)
            if envelope:
                return host.answer(event, payload, {"inject": envelope})
        data, key, host_name, mine = self.data_dir, self.project_key, call.host.name, whose(root)
        # the project's answer is the service owner's: never a member's stand-in
        kept = standby_answer(data, key, host_name, mine, event, project=acting_member() is None)
        if not kept:
            return None
        try:
            return self.stand_in(host, event, payload, kept)
        except ValueError:
            return None


def whose(root: str) -> str:
    """A session's standby name: a team member's is kept apart under the member's name."""
    member = acting_member()
    return root if member is None else f"{member}\n{root}"


async def current_envelope(memory: Memory, root: str) -> str | None:
    """The session's envelope as the hot tier holds it now, or None.

    None when the hot tier is down or slow, the session has none, or it is another member's.
    """
    try:
        await asyncio.wait_for(memory.dispatch.owners.admit(root), STAND_IN_S)
        envelope, _ = await asyncio.wait_for(memory.backends.store.take_envelope(root), STAND_IN_S)
    except Exception:  # a stand-in is a best effort: the call already failed open
        return None
    return envelope


def asks_for_memory(call: HostCall) -> bool:
    """Whether the call is a model call's (its answer is the session's memory)."""
    return any(isinstance(intent, ModelCall) for intent in call.payload)


def root_of(call: HostCall) -> str | None:
    """The root session of a call (None for one that names no session)."""
    if not isinstance(call.target, SessionTarget):
        return None
    return call.target.parent_id or call.target.session_id


async def answer_call(
    memory: Memory,
    host: HostWire,
    event: str,
    payload: Any,
    call_id: str = "",
    standbys: Standbys | None = None,
) -> Response:
    """Read, run and answer one host call (see the module).

    With ``standbys``, an answer that went through is kept for later, and a call that failed
    open without memory is answered with the session's standby answer instead.
    """
    try:
        call = host.call(event, payload, call_id)
        answer = await memory.dispatch.answer(call)
    except UsageError as error:
        return refuse(memory, host, event, payload, call_id, error)
    body = host.answer(event, payload, answer.output)
    if standbys is not None and answer.reason and not answer.output.get("inject"):
        body = await standbys.answer(memory, host, call, event, payload) or body
    response = respond(call, answer, body)
    if standbys is not None and response.status_code == 200:
        # what the host got, a stand-in included (a slow first call must not leave none)
        standbys.kept(call, event, body, answer.output)
    return response


__all__ = [
    "CALL_ID_MAX",
    "Standbys",
    "KEPT_HEADER",
    "NOT_KEPT",
    "REASON_HEADER",
    "WARNING_HEADER",
    "ErrorBody",
    "answer_call",
    "dumps",
    "error_detail",
    "error_field",
    "error_response",
    "forbidden",
    "header_text",
    "not_kept",
    "read_json",
    "refuse",
    "respond",
]
