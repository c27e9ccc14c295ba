"""LangChain v1 integration: session memory as agent middleware, and long-term memory as tools.

``SessionMemoryMiddleware`` plugs into :func:`langchain.agents.create_agent`. Before every model
call it records the conversation's new messages as plait events and hands the request a copy of
its messages with the ``<session_memory>`` envelope at the head of the last user message. The
agent's state never holds the envelope, so a request never carries it twice. Summaries get it
once: :meth:`SessionMemoryMiddleware.summarization` makes a ``SummarizationMiddleware`` whose
summary prompt ends with the envelope (a plain ``SummarizationMiddleware`` cannot be given it:
its summary call does not pass through other middleware). After a summarization the summary is
recorded as a ``compaction_summary`` event; the decisions, tasks, files and errors from before
it still come back in the envelope.

It works under ``invoke``/``stream`` (with :meth:`plait.Memory.open_sync`) and
``ainvoke``/``astream``. A run needs a session: the middleware's ``session_id``, else the run's
``thread_id``, else (no checkpointer, no thread) a session of its own for that conversation,
named after its first message; never a session shared with other conversations.

:func:`plait.adapters.hosts.langchain.tools.memory_tools` gives an agent the ``memory_*`` tools.
The node and pre-model hook for hand-built graphs live in
:mod:`plait.adapters.hosts.langchain.node`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.config import get_config
from langgraph.runtime import Runtime

from plait.adapters.hosts.langchain.messages import LANGCHAIN, intents_from_messages
from plait.intake import Answer
from plait.memory import Memory
from plait.state.base.boundary import fail_open, fail_open_sync
from plait.state.base.errors import UsageError
from plait.state.base.redact import redacted_logger
from plait.state.envelope import for_message, strip_envelopes
from plait.state.events import clean_text
from plait.state.intents import CompactionSummary, HostCall, Intent, ModelCall, SessionTarget
from plait.sync import SyncMemory

if TYPE_CHECKING:
    from langchain.agents.middleware.types import ModelCallResult

    from plait.adapters.hosts.http.client import ServiceClient
    from plait.adapters.hosts.langchain.remote import RemoteSessions

logger = redacted_logger("plait")

SUMMARY_SOURCE = "summarization"
RECENT_KEYS_KEPT = 256
SUMMARY_KEYS_KEPT = 16
SUMMARY_PREFIX = "Here is a summary of the conversation to date:"
NO_SESSION = (
    "plait: no session for this run: pass config={'configurable': {'thread_id': ...}} "
    "or give the middleware (or memory_tools) a session_id"
)

# -- pure helpers ---------------------------------------------------------------------------------


def message_key(message: BaseMessage) -> str:
    """A message's identity: its id, else a digest of its type and text."""
    if message.id:
        return str(message.id)
    text = clean_text(f"{message.type}\x00{message.text}")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"sha256:{digest[:32]}"


def is_summary(message: BaseMessage) -> bool:
    """Whether a message is a summary ``SummarizationMiddleware`` put in place of older ones."""
    return message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedMessages:
    """Which messages of a session were recorded: a bounded window of keys and the summaries'."""

    recent: tuple[str, ...] = ()
    summaries: tuple[str, ...] = ()

    def to_json(self) -> str:
        """Serialize for the hot store's cache."""
        return json.dumps({"recent": list(self.recent), "summaries": list(self.summaries)})

    @classmethod
    def from_json(cls, raw: str | None) -> RecordedMessages:
        """Parse what :meth:`to_json` wrote; anything unreadable is an empty record."""
        try:
            data = json.loads(raw) if raw else {}
            return cls(
                recent=tuple(str(key) for key in data.get("recent", ())),
                summaries=tuple(str(key) for key in data.get("summaries", ())),
            )
        except (ValueError, TypeError, AttributeError):
            return cls()


def select_unrecorded(
    messages: Sequence[BaseMessage], recorded: RecordedMessages
) -> list[BaseMessage]:
    """Messages not recorded before.

    History only grows at its end, except that a summarization replaces its head with a summary
    message. So a message is new when its key was never recorded and it comes after the newest
    recorded one, or it is a summary not recorded before. Messages before the newest recorded
    one whose keys fell out of the bounded window are old, not new.
    """
    recent = set(recorded.recent)
    keys = [message_key(message) for message in messages]  # a digest each when there is no id
    last_recorded = max((index for index, key in enumerate(keys) if key in recent), default=-1)
    fresh = []
    for index, (message, key) in enumerate(zip(messages, keys, strict=True)):
        if is_summary(message):
            if key not in recorded.summaries and key not in recent:
                fresh.append(message)
        elif index > last_recorded and key not in recent:
            fresh.append(message)
    return fresh


def after_recording(
    recorded: RecordedMessages, messages: Sequence[BaseMessage]
) -> RecordedMessages:
    """The record once ``messages`` (the whole current history) are recorded."""
    keys = [message_key(message) for message in messages]
    summaries = [message_key(message) for message in messages if is_summary(message)]
    recent = tuple(dict.fromkeys(keys))[-RECENT_KEYS_KEPT:]
    kept_summaries = tuple(dict.fromkeys([*recorded.summaries, *summaries]))[-SUMMARY_KEYS_KEPT:]
    return RecordedMessages(recent=recent, summaries=kept_summaries)


def summary_text(message: BaseMessage) -> str:
    """The text of a summary message without LangChain's fixed lead-in."""
    text = message.text.strip()
    return text.removeprefix(SUMMARY_PREFIX).strip()


def summary_intent(message: BaseMessage) -> CompactionSummary:
    """A summarization's summary message: the summary that replaced the older messages."""
    return CompactionSummary(text=summary_text(message), key=f"summary:{message_key(message)}")


def intents_of(messages: Sequence[BaseMessage]) -> list[Intent]:
    """What new messages say: summaries first, then the conversation (envelopes removed)."""
    summaries: list[Intent] = [summary_intent(m) for m in messages if is_summary(m)]
    others = [_without_envelope(m) for m in messages if not is_summary(m)]
    return [*summaries, *intents_from_messages(others)]


def latest_request(messages: Sequence[BaseMessage]) -> str:
    """The text of the last user message that is not a summary (the query for recall)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_summary(message):
            return strip_envelopes(message.text).strip()
    return ""


def _strip_block(block: Any) -> Any:
    """A content block without envelopes; None for a text block that held nothing else."""
    if not (isinstance(block, dict) and block.get("type") == "text"):
        return block
    text = str(block.get("text", ""))
    if "<session_memory" not in text:
        return block
    remaining = strip_envelopes(text)
    return {**block, "text": remaining} if remaining.strip() else None


def _without_envelope[M: BaseMessage](message: M) -> M:
    """The message with any ``<session_memory>`` block removed from its text."""
    content = message.content
    if isinstance(content, str):
        cleaned: Any = strip_envelopes(content)
    else:
        cleaned = [_strip_block(block) for block in content]
        cleaned = [block for block in cleaned if block is not None]
    if cleaned == content:
        return message
    return message.model_copy(update={"content": cleaned})


def _with_envelope_first[M: BaseMessage](message: M, envelope: str) -> M:
    """The message with the envelope before its content."""
    content = message.content
    if isinstance(content, str):
        new: Any = f"{envelope}\n\n{content}" if content else envelope
    else:
        new = [{"type": "text", "text": envelope}, *content]
    return message.model_copy(update={"content": new})


def inject_envelope(messages: Sequence[AnyMessage], envelope: str) -> list[AnyMessage]:
    """A copy of ``messages`` with the envelope at the head of the last user message.

    Every earlier envelope plait injected is stripped first, so the result holds the envelope
    at most once; a person's text is never cut. With no user message the envelope becomes a
    user message of its own, first. The input messages are never changed.
    """
    cleaned: list[AnyMessage] = [_without_envelope(message) for message in messages]
    if not envelope:
        return cleaned
    for index in range(len(cleaned) - 1, -1, -1):
        message = cleaned[index]
        if isinstance(message, HumanMessage):
            fitted = for_message(envelope, message.text)  # no item that only repeats it
            cleaned[index] = _with_envelope_first(message, fitted) if fitted else message
            return cleaned
    return [HumanMessage(content=envelope), *cleaned]


def thread_id_of(config: RunnableConfig | None) -> str | None:
    """The LangGraph ``thread_id`` of a run config, if any."""
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    return str(thread_id) if thread_id else None


def unwrap(memory: Memory | SyncMemory) -> Memory:
    """The :class:`Memory` behind a handle from :meth:`Memory.open_sync` (or itself)."""
    return memory.memory if isinstance(memory, SyncMemory) else memory


def own_session(messages: Sequence[BaseMessage]) -> str:
    """The session of a conversation run without a thread: named after its first message."""
    if not messages:
        raise UsageError(NO_SESSION)
    return f"run-{message_key(messages[0])}"


def session_for(session_id: str | None, thread_id: object, messages: Sequence[BaseMessage]) -> str:
    """The session of a run: the one given, else the run's thread, else the conversation's own.

    Raises :class:`~plait.UsageError` when there is none of them (no messages).
    """
    found = session_id or thread_id or current_thread_id()
    return str(found) if found else own_session(messages)


def current_thread_id() -> str | None:
    """The ``thread_id`` of the LangGraph run this code runs in, if any."""
    try:
        return thread_id_of(get_config())
    except RuntimeError:
        return None


# -- recording ------------------------------------------------------------------------------------


class SessionRecorder:
    """Records a LangChain conversation into plait and returns the envelope for the next call.

    Shared by the middleware, the LangGraph node and the pre-model hook. Which messages were
    recorded is kept in the hot store per session (bounded), so nothing is recorded twice, not
    across runs of the same thread nor across processes.
    """

    def __init__(self, memory: Memory) -> None:
        """Record into ``memory``."""
        self.memory = memory

    def _recorded_key(self, session_id: str) -> str:
        return f"langchain:recorded:{self.memory.group_id}:{session_id}"

    async def _unrecorded(
        self, session_id: str, messages: Sequence[BaseMessage]
    ) -> tuple[list[Intent], RecordedMessages]:
        key = self._recorded_key(session_id)
        recorded = RecordedMessages.from_json(await self.memory.backends.store.get_cache(key))
        fresh = select_unrecorded(messages, recorded)
        return intents_of(fresh), after_recording(recorded, messages)

    async def _save(self, session_id: str, recorded: RecordedMessages) -> None:
        ttl = self.memory.settings.redis.session_ttl_seconds
        await self.memory.backends.store.put_cache(
            self._recorded_key(session_id), recorded.to_json(), ttl
        )

    async def turn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """Record the messages not recorded before; return the envelope for the next call."""
        envelope, _ = await self.exchange(session_id, messages)
        return envelope

    async def exchange(
        self, session_id: str, messages: Sequence[BaseMessage], query: str | None = None
    ) -> tuple[str, bool]:
        """:meth:`turn`, and whether the messages were recorded (False: it failed open).

        ``query`` is the latest request, given when ``messages`` may not hold it (a remote agent
        sends only what it has not seen recorded); else it is read from ``messages``.
        """
        intents, recorded = await self._unrecorded(session_id, messages)
        asked = latest_request(messages) if query is None else query
        answer = await self._answer(session_id, [*intents, ModelCall(query=asked)], recorded)
        return answer.output.get("inject") or "", not answer.reason

    async def record(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the messages not recorded before, without composing; return how many intents."""
        count, _ = await self.recorded(session_id, messages)
        return count

    async def recorded(self, session_id: str, messages: Sequence[BaseMessage]) -> tuple[int, bool]:
        """:meth:`record`, and whether they were recorded (False: it failed open)."""
        intents, recorded = await self._unrecorded(session_id, messages)
        if not intents:
            return 0, True
        answer = await self._answer(session_id, intents, recorded)
        return len(intents), not answer.reason

    async def _answer(
        self, session_id: str, intents: Sequence[Intent], recorded: RecordedMessages
    ) -> Answer:
        """Run the call; the messages count as recorded only once it went through.

        A call that failed open (plait down, too slow) leaves them unrecorded: the next call
        of the thread sends them again, in order, before its own.
        """
        call = HostCall(
            host=LANGCHAIN, target=SessionTarget(session_id=session_id), payload=list(intents)
        )
        answer = await self.memory.dispatch.answer(call)
        if answer.reason:
            logger.warning("plait: recording skipped, sent again next call: %s", answer.reason)
        else:
            await self._save(session_id, recorded)
        return answer


# -- middleware -----------------------------------------------------------------------------------


class SessionLink(Protocol):
    """Where a conversation's session memory is kept: this process or a shared service."""

    session_id: str | None

    def turn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """Record the new messages; the envelope for the model call about to be made."""
        ...

    async def aturn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """:meth:`turn` from async code."""
        ...

    def record(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the new messages without composing; how many intents they made."""
        ...

    async def arecord(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """:meth:`record` from async code."""
        ...

    def summary(self, session_id: str) -> str:
        """The envelope for a summarizer about to compact the session."""
        ...

    async def asummary(self, session_id: str) -> str:
        """:meth:`summary` from async code."""
        ...


class LocalSessions:
    """The session memory of a :class:`~plait.Memory` in this process, from any event loop.

    Synchronous calls need a memory opened with :meth:`plait.Memory.open_sync` (its loop runs in
    a thread of its own); otherwise they raise :class:`~plait.UsageError` saying so.
    """

    def __init__(self, memory: Memory, *, session_id: str | None = None) -> None:
        """Record into ``memory``; ``session_id`` overrides the run's ``thread_id``."""
        self.memory = memory
        self.session_id = session_id
        self.recorder = SessionRecorder(memory)

    def turn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """Record the new messages; the envelope for the next model call."""
        return self.memory.dispatch.run_sync(self.recorder.turn(session_id, messages))

    async def aturn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """:meth:`turn` from async code."""
        return await self.memory.dispatch.run_async(self.recorder.turn(session_id, messages))

    def record(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the new messages without composing."""
        return self.memory.dispatch.run_sync(self.recorder.record(session_id, messages))

    async def arecord(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """:meth:`record` from async code."""
        return await self.memory.dispatch.run_async(self.recorder.record(session_id, messages))

    def summary(self, session_id: str) -> str:
        """The envelope for a summarizer about to compact the session."""
        return self.memory.dispatch.run_sync(self.memory.compaction_before(session_id))

    async def asummary(self, session_id: str) -> str:
        """:meth:`summary` from async code."""
        return await self.memory.dispatch.run_async(self.memory.compaction_before(session_id))


def session_link(
    where: Memory | SyncMemory | ServiceClient | LocalSessions | RemoteSessions,
    session_id: str | None,
) -> SessionLink:
    """Where the middleware keeps session memory: a memory here, or a service's client."""
    # the HTTP service serves this module's recorder: its client is imported when first used
    from plait.adapters.hosts.http.client import ServiceClient
    from plait.adapters.hosts.langchain.remote import RemoteSessions

    if isinstance(where, LocalSessions | RemoteSessions):
        if session_id is not None:
            where.session_id = session_id
        return where
    if isinstance(where, ServiceClient):
        return RemoteSessions(client=where, session_id=session_id)
    return LocalSessions(unwrap(where), session_id=session_id)


class SessionMemoryMiddleware(AgentMiddleware):
    """plait session memory for :func:`langchain.agents.create_agent`.

    Example:
        ```python
        async with Memory.open(project_dir) as memory:
            session_memory = SessionMemoryMiddleware(memory)
            agent = create_agent(
                model,
                tools=[*tools, *memory_tools(memory)],
                middleware=[
                    session_memory.summarization(model, trigger=("tokens", 4000)),
                    session_memory,
                ],
            )
            await agent.ainvoke({"messages": [...]}, {"configurable": {"thread_id": "t1"}})
        ```

    Synchronous runs (``invoke``, ``stream``) need a memory opened with
    :meth:`plait.Memory.open_sync`, which serves ``ainvoke``/``astream`` too. With a team's
    shared service, give it ``plait.connect(url, token)`` instead of a memory: the session's
    memory is kept there (:mod:`plait.adapters.hosts.langchain.remote`), under any run. Any
    failure inside plait is logged and the model call goes ahead unchanged; a run with no
    session at all (see the module) is an error.
    """

    def __init__(
        self,
        memory: Memory | SyncMemory | ServiceClient | LocalSessions | RemoteSessions,
        *,
        session_id: str | None = None,
    ) -> None:
        """Use ``memory`` (or a service's client); ``session_id`` overrides the ``thread_id``."""
        super().__init__()
        self.sessions = session_link(memory, session_id)

    def _session(self, runtime: Runtime[Any] | None, messages: Sequence[BaseMessage]) -> str:
        info = getattr(runtime, "execution_info", None)
        return session_for(self.sessions.session_id, getattr(info, "thread_id", None), messages)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        """Record new messages, then call the model with the envelope in its messages."""
        session = self._session(request.runtime, request.messages)
        work = self.sessions.aturn(session, request.messages)
        envelope = await fail_open("session memory for a model call", work, None)
        return await handler(with_envelope(request, envelope))

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelCallResult:
        """The same for ``invoke``/``stream``."""
        session = self._session(request.runtime, request.messages)
        turn = functools.partial(self.sessions.turn, session, request.messages)
        envelope = self._sync("session memory for a model call", turn, None)
        return handler(with_envelope(request, envelope))

    def _sync[T](self, what: str, work: Callable[[], T], fallback: T) -> T:
        """Run plait's work from synchronous code; fail open (with a warning) if it cannot."""
        try:
            return fail_open_sync(what, work, fallback)
        except UsageError as error:
            logger.warning("plait: %s skipped: %s", what, error)
            return fallback

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Record the run's last messages (the final answer) so the next run need not."""
        messages = state["messages"]
        work = self.sessions.arecord(self._session(runtime, messages), messages)
        await fail_open("recording the agent's last messages", work, 0)
        return None

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The same for ``invoke``/``stream``."""
        messages = state["messages"]
        record = functools.partial(self.sessions.record, self._session(runtime, messages), messages)
        self._sync("recording the agent's last messages", record, 0)
        return None

    def summarizer(
        self, model: BaseChatModel, *, prompt: str | None = None
    ) -> Runnable[list[AnyMessage], str]:
        """A ``summarizer`` for ``SummarizationMiddleware`` that gives the model the envelope once.

        The summary prompt (LangChain's default unless ``prompt``) is followed by the
        session's ``<session_memory>`` envelope, so what the session decided, its open tasks,
        files and errors reach the summary; the messages summarized never carry it.
        """
        from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT

        template = prompt or DEFAULT_SUMMARY_PROMPT

        async def summarize(messages: list[AnyMessage]) -> str:
            work = self.sessions.asummary(self._session(None, messages))
            envelope = await fail_open("session memory for a summary", work, "")
            return await ainvoke_text(model, summary_prompt(template, messages, envelope))

        def summarize_sync(messages: list[AnyMessage]) -> str:
            summary = functools.partial(self.sessions.summary, self._session(None, messages))
            envelope = self._sync("session memory for a summary", summary, "")
            return invoke_text(model, summary_prompt(template, messages, envelope))

        return RunnableLambda(summarize_sync, afunc=summarize, name="plait_summarizer")

    def summarization(self, model: BaseChatModel, **options: Any) -> AgentMiddleware:
        """A ``SummarizationMiddleware`` over ``model`` whose summaries get the envelope once.

        ``options`` go to ``SummarizationMiddleware`` (``trigger``, ``keep``, ...); put it
        before this middleware in ``create_agent(middleware=[...])``.
        """
        from langchain.agents.middleware import SummarizationMiddleware

        prompt = options.pop("summary_prompt", None)
        return SummarizationMiddleware(
            model, summarizer=self.summarizer(model, prompt=prompt), **options
        )


def with_envelope(request: ModelRequest, envelope: str | None) -> ModelRequest:
    """The request with the envelope in its messages; as it came when plait failed open."""
    if envelope is None:
        return request
    return request.override(messages=inject_envelope(request.messages, envelope))


def summary_prompt(template: str, messages: Sequence[BaseMessage], envelope: str) -> str:
    """LangChain's summary prompt over ``messages``, with the envelope after it (if any)."""
    from langchain_core.messages import get_buffer_string

    cleaned = [_without_envelope(message) for message in messages]
    text = template.format(messages=get_buffer_string(cleaned, format="xml")).rstrip()
    return f"{text}\n\n{envelope}" if envelope else text


async def ainvoke_text(model: BaseChatModel, prompt: str) -> str:
    """The model's answer to ``prompt`` as text."""
    return (await model.ainvoke(prompt)).text.strip()


def invoke_text(model: BaseChatModel, prompt: str) -> str:
    """The model's answer to ``prompt`` as text (synchronously)."""
    return model.invoke(prompt).text.strip()


__all__ = [
    "LocalSessions",
    "RecordedMessages",
    "SessionLink",
    "SessionMemoryMiddleware",
    "SessionRecorder",
    "after_recording",
    "current_thread_id",
    "inject_envelope",
    "is_summary",
    "latest_request",
    "message_key",
    "own_session",
    "select_unrecorded",
    "summary_intent",
    "session_link",
    "thread_id_of",
    "with_envelope",
]
