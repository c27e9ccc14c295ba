"""A drain of a test's memory with an embedder of the test's choosing."""

from __future__ import annotations

from typing import Any

from plait import Memory
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.background import Background


def drainer(memory: Memory, embedder: Any) -> Background:
    """A drain of the memory's group over its store and recall index, with ``embedder``."""

    async def graph() -> InMemoryKnowledgeGraph:
        return InMemoryKnowledgeGraph()

    assert memory.background is not None
    return Background(
        store=memory.backends.store,
        settings=memory.backends.settings,
        group_id=memory.group_id,
        knowledge_factory=graph,
        recall=memory.background.recall,
        embedder=embedder,
    )


__all__ = ["drainer"]
