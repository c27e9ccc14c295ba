"""A LangChain agent's session memory kept by a shared plait service, over HTTP.

``SessionMemoryMiddleware(plait.connect(url, token))`` (or ``RemoteSessions(url, token)``) runs
the agent here and its memory in the team's ``plait serve``: before each model call the messages
the service has not acknowledged are sent to ``POST /v1/langchain/turn``
(:mod:`plait.adapters.hosts.langchain.service_routes`) and the envelope it answers goes into the
request. The URL may list replicas, comma-separated: a call goes to the first that answers.

What was acknowledged is remembered here per session (a bounded window of message keys, as the
service keeps its own), so a call carries only what is new; a process that starts again sends
the thread once whole and the service skips what it recorded before. When no service answers,
or it failed open, nothing counts as sent: the next model call of the thread sends those
messages again, in order, before its own. The model call itself never waits for more than
``timeout`` per listed service and goes ahead without an envelope.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict

from plait.adapters.hosts.http.client import ServiceClient
from plait.adapters.hosts.langchain.middleware import (
    RecordedMessages,
    after_recording,
    latest_request,
    select_unrecorded,
)
from plait.state.base.errors import BackendError, BackendUnavailable, NotYourSession, UsageError

# above the service's own in-process bound (hooks.in_process_timeout_ms, 2 s): its answer, even
# a failed-open one, arrives before the client gives up
TIMEOUT_S = 3.0
SESSIONS_KEPT = 1024
# A thread the service refused as another member's is not sent again for this long (its whole
# history would go with every turn, to be refused again).
REFUSED_FOR_S = 600.0
# the service takes bodies of up to 16 MB: batches stay well below; one message's text too, even
# when every character is escaped as JSON sends it (at most 6 bytes a character)
BATCH_BYTES = 4 * 1024 * 1024
MESSAGE_MAX_CHARS = 2 * 1024 * 1024


def bounded(message: BaseMessage) -> BaseMessage:
    """The message, its text cut at :data:`MESSAGE_MAX_CHARS` when longer (events keep far less)."""
    if isinstance(message.content, str) and len(message.content) > MESSAGE_MAX_CHARS:
        return message.model_copy(update={"content": message.content[:MESSAGE_MAX_CHARS]})
    return message


def batched(sizes: Sequence[int], limit: int) -> list[range]:
    """Consecutive runs of items of about ``limit`` bytes at most (one item at least each)."""
    spans: list[range] = []
    start = total = 0
    for index, size in enumerate(sizes):
        if index > start and total + size > limit:
            spans.append(range(start, index))
            start, total = index, 0
        total += size
    spans.append(range(start, len(sizes)))
    return spans


class RemoteSessions:
    """Records a conversation into a plait service and fetches its envelope, from any thread."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        client: ServiceClient | None = None,
        session_id: str | None = None,
        timeout: float = TIMEOUT_S,
        batch_bytes: int = BATCH_BYTES,
    ) -> None:
        """The service at ``url`` (default ``PLAIT_URL``) under ``token`` (``PLAIT_TOKEN``).

        ``client``: a service's client to go through instead (``plait.connect``; its
        ``aclose`` closes what this opened). ``session_id`` overrides the run's ``thread_id``;
        ``timeout`` bounds each listed service's answer; ``batch_bytes`` one request's messages
        (a message's text over :data:`MESSAGE_MAX_CHARS` characters is cut).

        Raises:
            ConfigError: no URL or no token.
        """
        self.service = client if client is not None else ServiceClient(url, token)
        self.session_id = session_id
        self.timeout = timeout
        self.batch_bytes = batch_bytes
        self._sent: OrderedDict[str, RecordedMessages] = OrderedDict()
        self._refused: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def post(self, action: str, body: dict[str, Any]) -> dict[str, Any]:
        """One action on the first listed service that answers; its JSON answer.

        Raises:
            BackendUnavailable: none answered (nothing was done).
            BackendError: the service refused the call or the token, or the session is another
                member's (then it is not sent again for :data:`REFUSED_FOR_S`). Not a
                :class:`~plait.UsageError`: the agent's run is not wrong, so it goes on without
                memory (a warning says why) rather than stop.
        """
        session = str(body.get("session_id") or "")
        with self._lock:
            refused = self._refused.get(session)
        if refused is not None and time.monotonic() - refused[0] < REFUSED_FOR_S:
            raise BackendError(f"the plait service refused the session: {refused[1]}")
        try:
            return self.service.post(f"/v1/langchain/{action}", body, timeout=self.timeout)
        except NotYourSession as theirs:
            with self._lock:
                self._refused[session] = (time.monotonic(), str(theirs))
                while len(self._refused) > SESSIONS_KEPT:
                    self._refused.popitem(last=False)
            raise BackendError(f"the plait service refused the session: {theirs}") from theirs
        except UsageError as refused:
            raise BackendError(f"the plait service refused the call: {refused}") from refused

    def _acknowledged(self, session_id: str) -> RecordedMessages:
        with self._lock:
            return self._sent.get(session_id, RecordedMessages())

    def _remember(self, session_id: str, recorded: RecordedMessages) -> None:
        with self._lock:
            self._sent[session_id] = recorded
            self._sent.move_to_end(session_id)
            while len(self._sent) > SESSIONS_KEPT:
                self._sent.popitem(last=False)

    def _send(self, action: str, session_id: str, messages: Sequence[BaseMessage]) -> Any:
        """Send what the service has not acknowledged; remember it once it was recorded.

        More than :attr:`batch_bytes` of it (a thread sent whole after a restart) goes as
        ``record`` calls of at most that much first, each remembered once recorded, so no
        request outgrows the service's body limit.

        Raises:
            BackendUnavailable: a batch before the last was not recorded (sent again next call).
        """
        before = self._acknowledged(session_id)
        fresh = select_unrecorded(messages, before)
        if action == "record" and not fresh:
            return 0
        wire = messages_to_dict([bounded(message) for message in fresh])
        spans = batched([len(json.dumps(item)) for item in wire], self.batch_bytes)
        query = latest_request(messages)
        if len(spans) > 1:
            position = {id(message): index for index, message in enumerate(messages)}
        for span in spans[:-1]:
            body = {"session_id": session_id, "messages": wire[span.start : span.stop]}
            answer = self.post("record", {**body, "query": query})
            if answer.get("recorded") is not True:
                raise BackendUnavailable("the plait service did not record the thread's history")
            last = position[id(fresh[span.stop - 1])]
            before = after_recording(before, messages[: last + 1])
            self._remember(session_id, before)
        rest = wire[spans[-1].start :]
        answer = self.post(action, {"session_id": session_id, "messages": rest, "query": query})
        if answer.get("recorded") is True:
            self._remember(session_id, after_recording(before, messages))
        return answer.get("envelope", "") if action == "turn" else answer.get("intents", 0)

    def turn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """Record the new messages; the envelope for the model call about to be made."""
        return str(self._send("turn", session_id, messages) or "")

    def record(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the new messages without composing; how many intents they made."""
        return int(self._send("record", session_id, messages) or 0)

    def summary(self, session_id: str) -> str:
        """The envelope for a summarizer about to compact the session."""
        return str(self.post("summary", {"session_id": session_id}).get("envelope") or "")

    async def aturn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """:meth:`turn` without blocking the event loop."""
        return await asyncio.to_thread(self.turn, session_id, messages)

    async def arecord(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """:meth:`record` without blocking the event loop."""
        return await asyncio.to_thread(self.record, session_id, messages)

    async def asummary(self, session_id: str) -> str:
        """:meth:`summary` without blocking the event loop."""
        return await asyncio.to_thread(self.summary, session_id)

    def close(self) -> None:
        """Close the connections."""
        self.service.close_blocking()


__all__ = ["RemoteSessions"]
