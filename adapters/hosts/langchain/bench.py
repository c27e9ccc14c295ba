"""A LangChain agent's turns timed, with or without plait's middleware (``plait bench middleware``).

The same ``create_agent`` loop (a fake chat model answering at once, no tools, LangGraph's
in-memory checkpointer) runs turn after turn; with a ``Memory`` (or a shared service's client,
``plait.connect``), ``SessionMemoryMiddleware`` records the new messages and injects the
envelope before each model call, as in an application. Sessions are 20 turns long (the history
grows within one); the first turns are warm-up.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from plait.adapters.hosts.langchain.middleware import SessionMemoryMiddleware

if TYPE_CHECKING:
    from plait.adapters.hosts.http.client import ServiceClient
    from plait.memory import Memory

SESSION_TURNS = 20
WARM_UP_TURNS = 20
PROMPTS = (
    "We decided to keep money as integer cents in the ledger.",
    "Rule: never call the payment API from unit tests.",
    "Please add an index on orders.created_at.",
    "Now write the repository layer for invoices.",
)


async def agent_turns(memory: Memory | ServiceClient | None, turns: int) -> list[float]:
    """Milliseconds per agent turn (``ainvoke`` of one user message), warm-up left out."""
    total = turns + WARM_UP_TURNS
    model = FakeMessagesListChatModel(responses=[AIMessage(content="Done.")] * total)
    middleware: list[Any] = [SessionMemoryMiddleware(memory)] if memory is not None else []
    agent = create_agent(model=model, tools=[], middleware=middleware, checkpointer=InMemorySaver())
    samples: list[float] = []
    thread = ""
    for turn in range(total):
        if turn % SESSION_TURNS == 0:
            thread = f"bench-{uuid.uuid4().hex[:10]}"
        message = HumanMessage(content=f"{PROMPTS[turn % len(PROMPTS)]} (turn {turn})")
        started = time.perf_counter()
        await agent.ainvoke({"messages": [message]}, {"configurable": {"thread_id": thread}})
        if turn >= WARM_UP_TURNS:
            samples.append((time.perf_counter() - started) * 1000)
    return samples


__all__ = ["agent_turns"]
