"""plait session memory for hand-built LangGraph graphs and ``create_react_agent``.

Two callables do what :class:`~plait.adapters.hosts.langchain.SessionMemoryMiddleware` does for
``create_agent``:

- :func:`session_memory_hook` is a ``pre_model_hook``: it records the new messages and returns
  ``llm_input_messages``, the messages for this model call with the envelope in them. The
  ``messages`` channel (the persisted history) is left alone.
- :func:`session_memory_node` is a node for a hand-built ``StateGraph``: it records the new
  messages and writes the envelope to a state key of its own (``session_memory`` by default),
  for the model node to pass through :func:`~plait.adapters.hosts.langchain.inject_envelope`.

Both fail open: a failure inside plait is logged and the model call gets the plain messages.
Both run under ``invoke`` and ``ainvoke`` alike (a LangChain ``RunnableLambda`` with a sync and an
async function); under ``invoke`` give them a memory from :meth:`plait.Memory.open_sync`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from plait.adapters.hosts.langchain.middleware import (
    SessionRecorder,
    inject_envelope,
    unwrap,
)
from plait.state.base.boundary import fail_open
from plait.state.base.errors import UsageError
from plait.state.base.redact import redacted_logger

if TYPE_CHECKING:
    from plait.memory import Memory
    from plait.sync import SyncMemory

logger = redacted_logger("plait")

MemoryNode = RunnableLambda
AsyncNode = Callable[[Any, RunnableConfig], Coroutine[Any, Any, dict[str, Any]]]
ENVELOPE_KEY = "session_memory"


def _messages_of(state: Any, messages_key: str) -> Sequence[AnyMessage]:
    """The messages of a dict or object state."""
    if isinstance(state, dict):
        return state.get(messages_key) or []
    return getattr(state, messages_key, None) or []


async def _envelope(
    recorder: SessionRecorder, messages: Sequence[AnyMessage], config: RunnableConfig
) -> str:
    """Record and compose, failing open to no envelope."""
    work = recorder.turn(recorder.resolve_session(config, messages), messages)
    return await fail_open("session memory for a model call", work, "")


def both_ways(
    memory: Memory, run: AsyncNode, fallback: Callable[[Any], dict[str, Any]], name: str
) -> MemoryNode:
    """``run`` as a node for ``ainvoke`` and ``invoke``, on the memory's own loop.

    Under ``invoke`` the memory must come from :meth:`plait.Memory.open_sync`; when it cannot
    run there the node fails open to ``fallback(state)``, with a warning.
    """

    def run_sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        try:
            return memory.dispatch.run_sync(run(state, config))
        except UsageError as error:
            logger.warning("plait: session memory skipped: %s", error)
            return fallback(state)

    async def run_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return await memory.dispatch.run_async(run(state, config))

    return RunnableLambda(run_sync, afunc=run_async, name=name)


def session_memory_hook(
    memory: Memory | SyncMemory, *, session_id: str | None = None, messages_key: str = "messages"
) -> MemoryNode:
    """A ``pre_model_hook`` that records new messages and injects the envelope.

    Args:
        memory: The open plait memory of the project.
        session_id: The session; default the run's ``thread_id``.
        messages_key: The state key holding the conversation.

    Returns:
        A node (sync and async) returning ``{"llm_input_messages": [...]}``.
    """
    memory = unwrap(memory)
    recorder = SessionRecorder(memory, session_id=session_id)

    async def plait_pre_model_hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _messages_of(state, messages_key)
        envelope = await _envelope(recorder, messages, config)
        return {"llm_input_messages": inject_envelope(messages, envelope)}

    def plain(state: Any) -> dict[str, Any]:
        return {"llm_input_messages": list(_messages_of(state, messages_key))}

    return both_ways(memory, plait_pre_model_hook, plain, "plait_pre_model_hook")


def session_memory_node(
    memory: Memory | SyncMemory,
    *,
    session_id: str | None = None,
    messages_key: str = "messages",
    envelope_key: str = ENVELOPE_KEY,
) -> MemoryNode:
    """A graph node that records new messages and puts the envelope in ``envelope_key``.

    Args:
        memory: The open plait memory of the project.
        session_id: The session; default the run's ``thread_id``.
        messages_key: The state key holding the conversation.
        envelope_key: The state key the envelope goes to (not the message history).

    Returns:
        A node (sync and async) returning ``{envelope_key: envelope}`` (``""`` when there is
        none).
    """
    memory = unwrap(memory)
    recorder = SessionRecorder(memory, session_id=session_id)

    async def plait_session_memory(state: Any, config: RunnableConfig) -> dict[str, Any]:
        envelope = await _envelope(recorder, _messages_of(state, messages_key), config)
        return {envelope_key: envelope}

    return both_ways(
        memory, plait_session_memory, lambda _: {envelope_key: ""}, "plait_session_memory"
    )


__all__ = ["ENVELOPE_KEY", "MemoryNode", "session_memory_hook", "session_memory_node"]
