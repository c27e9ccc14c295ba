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
async function); under ``invoke`` give them a memory from :meth:`plait.Memory.open_sync`. Given
``plait.connect(url, token)`` instead of a memory, they keep the session's memory in that shared
service (:mod:`plait.adapters.hosts.langchain.remote`), under either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from plait.adapters.hosts.langchain.middleware import (
    SessionLink,
    inject_envelope,
    session_for,
    session_link,
    thread_id_of,
)
from plait.state.base.boundary import fail_open, fail_open_sync
from plait.state.base.errors import UsageError
from plait.state.base.redact import redacted_logger

if TYPE_CHECKING:
    from plait.adapters.hosts.http.client import ServiceClient
    from plait.adapters.hosts.langchain.middleware import LocalSessions
    from plait.adapters.hosts.langchain.remote import RemoteSessions
    from plait.memory import Memory
    from plait.sync import SyncMemory

    Where = Memory | SyncMemory | ServiceClient | LocalSessions | RemoteSessions

logger = redacted_logger("plait")

MemoryNode = RunnableLambda
ENVELOPE_KEY = "session_memory"
WHAT = "session memory for a model call"


def _messages_of(state: Any, messages_key: str) -> Sequence[AnyMessage]:
    """The messages of a dict or object state."""
    if isinstance(state, dict):
        return state.get(messages_key) or []
    return getattr(state, messages_key, None) or []


def envelope_node(
    link: SessionLink, messages_key: str, answer: Callable[[Any, str], dict[str, Any]], name: str
) -> MemoryNode:
    """A node (sync and async): records the new messages, answers ``answer(state, envelope)``.

    It fails open to the envelope ``""``, with a warning (under ``invoke``, a memory not opened
    with :meth:`plait.Memory.open_sync` too).
    """

    def run_sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _messages_of(state, messages_key)
        session = session_for(link.session_id, thread_id_of(config), messages)
        try:
            envelope = fail_open_sync(WHAT, lambda: link.turn(session, messages), "")
        except UsageError as error:
            logger.warning("plait: session memory skipped: %s", error)
            envelope = ""
        return answer(state, envelope)

    async def run_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _messages_of(state, messages_key)
        session = session_for(link.session_id, thread_id_of(config), messages)
        envelope = await fail_open(WHAT, link.aturn(session, messages), "")
        return answer(state, envelope)

    return RunnableLambda(run_sync, afunc=run_async, name=name)


def session_memory_hook(
    memory: Where, *, session_id: str | None = None, messages_key: str = "messages"
) -> MemoryNode:
    """A ``pre_model_hook`` that records new messages and injects the envelope.

    Args:
        memory: The open plait memory of the project, or ``plait.connect(url, token)``.
        session_id: The session; default the run's ``thread_id``.
        messages_key: The state key holding the conversation.

    Returns:
        A node (sync and async) returning ``{"llm_input_messages": [...]}``.
    """

    def answer(state: Any, envelope: str) -> dict[str, Any]:
        return {"llm_input_messages": inject_envelope(_messages_of(state, messages_key), envelope)}

    link = session_link(memory, session_id)
    return envelope_node(link, messages_key, answer, "plait_pre_model_hook")


def session_memory_node(
    memory: Where,
    *,
    session_id: str | None = None,
    messages_key: str = "messages",
    envelope_key: str = ENVELOPE_KEY,
) -> MemoryNode:
    """A graph node that records new messages and puts the envelope in ``envelope_key``.

    Args:
        memory: The open plait memory of the project, or ``plait.connect(url, token)``.
        session_id: The session; default the run's ``thread_id``.
        messages_key: The state key holding the conversation.
        envelope_key: The state key the envelope goes to (not the message history).

    Returns:
        A node (sync and async) returning ``{envelope_key: envelope}`` (``""`` when there is
        none).
    """
    link = session_link(memory, session_id)
    return envelope_node(
        link, messages_key, lambda _, envelope: {envelope_key: envelope}, "plait_session_memory"
    )


__all__ = [
    "ENVELOPE_KEY",
    "MemoryNode",
    "envelope_node",
    "session_memory_hook",
    "session_memory_node",
]
