"""LangChain v1 integration: session memory as agent middleware, and long-term memory as tools.

``SessionMemoryMiddleware`` plugs into :func:`langchain.agents.create_agent`. Before every model
call it records the conversation's new messages as plait events and hands the request a copy of
its messages with the ``<session_memory>`` envelope at the head of the last user message. The
agent's state never holds the envelope, so a summarizer never summarizes it away and a request
never carries it twice. After a ``SummarizationMiddleware`` run the summary is recorded as a
``compaction_summary`` event; the decisions, tasks, files and errors from before it still come
back in the envelope.

:func:`memory_tools` gives an agent ``remember`` and ``recall`` over the project's long-term memory.
The node and pre-model hook for hand-built graphs live in
:mod:`plait.adapters.hosts.langchain.node`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from plait.adapters.hosts.langchain.messages import LANGCHAIN, intents_from_messages
from plait.boundary import fail_open
from plait.memory import Memory, MemoryKind, recalled, remembered
from plait.nodes.envelope import strip_envelopes
from plait.redact import redacted_logger
from plait.state.intents import CompactionSummary, Intent

if TYPE_CHECKING:
    from langchain.agents.middleware.types import ModelCallResult

logger = redacted_logger("plait")

SUMMARY_SOURCE = "summarization"
RECENT_KEYS_KEPT = 256
SUMMARY_KEYS_KEPT = 16
DEFAULT_SESSION = "project"
SUMMARY_PREFIX = "Here is a summary of the conversation to date:"

# -- pure helpers ---------------------------------------------------------------------------------


def message_key(message: BaseMessage) -> str:
    """A message's identity: its id, else a digest of its type and text."""
    if message.id:
        return str(message.id)
    digest = hashlib.sha256(f"{message.type}\x00{message.text}".encode()).hexdigest()
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
    last_recorded = max(
        (index for index, message in enumerate(messages) if message_key(message) in recent),
        default=-1,
    )
    fresh = []
    for index, message in enumerate(messages):
        key = message_key(message)
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

    Every earlier ``<session_memory>`` block is stripped first, so the result holds the envelope
    at most once. With no user message the envelope becomes a user message of its own, first.
    The input messages are never changed.
    """
    cleaned: list[AnyMessage] = [_without_envelope(message) for message in messages]
    if not envelope:
        return cleaned
    for index in range(len(cleaned) - 1, -1, -1):
        message = cleaned[index]
        if isinstance(message, HumanMessage):
            cleaned[index] = _with_envelope_first(message, envelope)
            return cleaned
    return [HumanMessage(content=envelope), *cleaned]


def thread_id_of(config: RunnableConfig | None) -> str | None:
    """The LangGraph ``thread_id`` of a run config, if any."""
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    return str(thread_id) if thread_id else None


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

    def __init__(self, memory: Memory, *, session_id: str | None = None) -> None:
        """Record into ``memory``; ``session_id`` overrides the run's ``thread_id``."""
        self.memory = memory
        self.session_id = session_id

    def resolve_session(self, config: RunnableConfig | None = None) -> str:
        """The session: the constructor's, else the run's ``thread_id``, else ``project``."""
        return self.session_id or thread_id_of(config) or current_thread_id() or DEFAULT_SESSION

    def _recorded_key(self, session_id: str) -> str:
        return f"langchain:recorded:{self.memory.group_id}:{session_id}"

    async def _unrecorded(
        self, session_id: str, messages: Sequence[BaseMessage]
    ) -> tuple[list[Intent], RecordedMessages]:
        key = self._recorded_key(session_id)
        recorded = RecordedMessages.from_json(await self.memory.store.get_cache(key))
        fresh = select_unrecorded(messages, recorded)
        return intents_of(fresh), after_recording(recorded, messages)

    async def _save(self, session_id: str, recorded: RecordedMessages) -> None:
        ttl = self.memory.settings.redis.session_ttl_seconds
        await self.memory.store.put_cache(self._recorded_key(session_id), recorded.to_json(), ttl)

    async def turn(self, session_id: str, messages: Sequence[BaseMessage]) -> str:
        """Record the messages not recorded before; return the envelope for the next call."""
        intents, recorded = await self._unrecorded(session_id, messages)
        envelope = await self.memory.model_call(
            session_id, query=latest_request(messages), observed=intents, host=LANGCHAIN
        )
        await self._save(session_id, recorded)
        return envelope

    async def record(self, session_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the messages not recorded before, without composing; return how many intents."""
        intents, recorded = await self._unrecorded(session_id, messages)
        if intents:
            await self.memory.observe(session_id, intents, host=LANGCHAIN)
        await self._save(session_id, recorded)
        return len(intents)


# -- middleware -----------------------------------------------------------------------------------


class SessionMemoryMiddleware(AgentMiddleware):
    """plait session memory for :func:`langchain.agents.create_agent`.

    Example:
        ```python
        async with Memory.open(project_dir) as memory:
            agent = create_agent(
                model,
                tools=[*tools, *memory_tools(memory)],
                middleware=[
                    SummarizationMiddleware(model, trigger=("tokens", 4000)),
                    SessionMemoryMiddleware(memory),
                ],
            )
            await agent.ainvoke({"messages": [...]}, {"configurable": {"thread_id": "t1"}})
        ```

    It works through the async API (``ainvoke``, ``astream``); a sync run goes ahead without
    memory and logs a warning. Any failure inside plait is logged and the model call goes
    ahead unchanged.
    """

    def __init__(self, memory: Memory, *, session_id: str | None = None) -> None:
        """Use ``memory``; ``session_id`` overrides the run's ``thread_id``."""
        super().__init__()
        self.recorder = SessionRecorder(memory, session_id=session_id)

    def _session(self, runtime: Runtime[Any] | None) -> str:
        info = getattr(runtime, "execution_info", None)
        thread_id = getattr(info, "thread_id", None)
        return self.recorder.session_id or thread_id or self.recorder.resolve_session()

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        """Record new messages, then call the model with the envelope in its messages."""
        prepared = await fail_open(
            "session memory for a model call", self._with_memory(request), request
        )
        return await handler(prepared)

    async def _with_memory(self, request: ModelRequest) -> ModelRequest:
        session = self._session(request.runtime)
        envelope = await self.recorder.turn(session, request.messages)
        return request.override(messages=inject_envelope(request.messages, envelope))

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelCallResult:
        """Sync runs go ahead without session memory (plait's I/O is async)."""
        logger.warning("plait: SessionMemoryMiddleware needs ainvoke/astream; memory is off")
        return handler(request)

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Record the run's last messages (the final answer) so the next run need not."""
        work = self.recorder.record(self._session(runtime), state["messages"])
        await fail_open("recording the agent's last messages", work, 0)
        return None


# -- tools ----------------------------------------------------------------------------------------


def memory_tools(memory: Memory, *, session_id: str | None = None) -> list[BaseTool]:
    """``remember`` and ``recall`` tools over the project's long-term memory.

    Args:
        memory: The open plait memory of the project.
        session_id: The session to record into; default the run's ``thread_id``.

    Returns:
        The two tools, ready for ``create_agent(tools=...)`` or a ``ToolNode``.
    """
    recorder = SessionRecorder(memory, session_id=session_id)

    async def remember(text: str, config: RunnableConfig, kind: MemoryKind = "decision") -> str:
        session = recorder.resolve_session(config)
        stored = await memory.remember(session, text, kind, source="langchain.remember")
        return remembered(kind, stored, memory.degraded)

    async def recall(query: str, config: RunnableConfig) -> str:
        return recalled(await memory.recall(recorder.resolve_session(config), query))

    return [
        StructuredTool.from_function(
            coroutine=remember,
            name="remember",
            description=(
                "Save a project decision, preference or rule to long-term memory so that it is "
                "remembered in later sessions. `text` is one self-contained sentence."
            ),
        ),
        StructuredTool.from_function(
            coroutine=recall,
            name="recall",
            description=(
                "Search the project's long-term memory (decisions, preferences, rules and facts "
                "from earlier sessions) for `query`."
            ),
        ),
    ]


__all__ = [
    "RecordedMessages",
    "SessionMemoryMiddleware",
    "SessionRecorder",
    "after_recording",
    "current_thread_id",
    "inject_envelope",
    "is_summary",
    "latest_request",
    "memory_tools",
    "message_key",
    "select_unrecorded",
    "summary_intent",
    "thread_id_of",
]
