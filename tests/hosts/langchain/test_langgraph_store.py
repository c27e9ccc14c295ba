"""PlaitStore: LangGraph's BaseStore over plait's observations, used by a graph and by LangMem."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langmem import create_manage_memory_tool, create_search_memory_tool
from typing_extensions import TypedDict

from plait import Memory, UsageError
from plait.adapters.hosts.langchain import PlaitStore


@pytest.fixture
async def memory(open_memory: Callable[..., Any]) -> AsyncIterator[Memory]:
    async with open_memory(f"project-{uuid.uuid4().hex[:6]}") as opened:  # a user group of its own
        yield opened


@pytest.fixture
def store(memory: Memory) -> PlaitStore:
    return PlaitStore(memory)


async def test_store_puts_gets_and_keeps_revisions(store: PlaitStore, memory: Memory) -> None:
    assert isinstance(store, BaseStore)
    namespace = ("project", "prefs")
    await store.aput(namespace, "indent", {"content": "Use tabs in Makefiles", "kind": "style"})
    await store.aput(namespace, "indent", {"content": "Use tabs in Makefiles, 8 wide"})
    item = await store.aget(namespace, "indent")
    assert item is not None and item.value == {"content": "Use tabs in Makefiles, 8 wide"}
    assert item.namespace == namespace and item.key == "indent"
    (observation,) = await memory.observations.listed("project")
    assert observation.revision == 2 and observation.revisions[0].content == "Use tabs in Makefiles"
    assert await store.aget(namespace, "missing") is None


async def test_store_searches_by_query_namespace_and_filter(store: PlaitStore) -> None:
    await store.aput(("user", "u1"), "a", {"content": "Prefers dark mode in editors", "n": 1})
    await store.aput(("user", "u2"), "b", {"content": "Prefers light mode", "n": 5})
    await store.aput(("project", "notes"), "c", {"content": "The cache is Redis"})
    found = await store.asearch(("user",), query="dark mode")
    assert [i.key for i in found][:1] == ["a"] and found[0].score is not None
    assert [i.key for i in await store.asearch(("user", "u2"))] == ["b"]
    assert [i.key for i in await store.asearch(("user",), filter={"n": {"$gte": 3}})] == ["b"]
    assert [i.key for i in await store.asearch(("project",))] == ["c"]
    namespaces = await store.alist_namespaces(prefix=("user",))
    assert namespaces == [("user", "u1"), ("user", "u2")]
    assert await store.alist_namespaces(max_depth=1) == [("project",), ("user",)]


async def test_store_sees_observations_saved_by_the_tools(
    store: PlaitStore, memory: Memory
) -> None:
    from plait.state.observations import check_draft

    saved = await memory.observations.save(
        check_draft(
            title="Drain uses Redis Streams", content="What: Redis Streams", type="decision"
        )
    )
    item = await store.aget(("project", "observations"), saved.observation.id)
    assert item is not None and item.value["type"] == "decision"
    found = await store.asearch(("project",), query="redis streams")
    assert found[0].key == saved.observation.id


async def test_store_deletes_and_refuses_unknown_roots(store: PlaitStore) -> None:
    await store.aput(("project", "tmp"), "k", {"content": "temporary note"})
    assert await store.aget(("project", "tmp"), "k") is not None  # or the delete proves nothing
    await store.adelete(("project", "tmp"), "k")
    assert await store.aget(("project", "tmp"), "k") is None
    with pytest.raises(UsageError, match="namespace"):
        await store.aput(("memories", "u1"), "k", {"content": "x"})


async def test_store_sync_methods_work_from_a_worker_thread(store: PlaitStore) -> None:
    await store.aput(("project", "sync"), "k", {"content": "written async"})
    item = await asyncio.to_thread(store.get, ("project", "sync"), "k")
    assert item is not None and item.value["content"] == "written async"
    with pytest.raises(UsageError, match="async"):
        store.get(("project", "sync"), "k")  # on the loop's own thread


class State(TypedDict):
    note: str
    found: list[str]


async def remember_and_look(state: State, runtime: Runtime[Any]) -> dict[str, Any]:
    assert runtime.store is not None
    await runtime.store.aput(("project", "graph"), "last", {"content": state["note"]})
    hits = await runtime.store.asearch(("project", "graph"), query="migration")
    return {"found": [hit.value["content"] for hit in hits]}


async def test_a_langgraph_graph_uses_it_as_runtime_store(store: PlaitStore) -> None:
    builder = StateGraph(State)
    builder.add_node("remember_and_look", remember_and_look)
    builder.add_edge(START, "remember_and_look")
    builder.add_edge("remember_and_look", END)
    graph = builder.compile(store=store)
    result = await graph.ainvoke({"note": "The migration runs with alembic", "found": []})
    assert result["found"] == ["The migration runs with alembic"]


async def test_langmem_manage_and_search_tools_work_on_plait(
    store: PlaitStore, memory: Memory
) -> None:
    namespace = ("user", "{langgraph_user_id}")
    manage = create_manage_memory_tool(namespace=namespace, store=store)
    search = create_search_memory_tool(namespace=namespace, store=store)
    config = {"configurable": {"langgraph_user_id": "ada"}}
    created = await manage.ainvoke({"content": "Ada prefers pytest over unittest"}, config)
    memory_id = created.split()[-1]
    found = json.loads(await search.ainvoke({"query": "pytest"}, config))
    assert [hit["key"] for hit in found] == [memory_id]
    assert found[0]["value"]["content"] == "Ada prefers pytest over unittest"
    await manage.ainvoke(
        {"content": "Ada prefers pytest with xdist", "action": "update", "id": memory_id}, config
    )
    found = json.loads(await search.ainvoke({"query": "pytest"}, config))
    assert found[0]["value"]["content"] == "Ada prefers pytest with xdist"
    (observation,) = await memory.observations.listed("personal")
    assert observation.revision == 2
    await manage.ainvoke({"action": "delete", "id": memory_id}, config)
    assert json.loads(await search.ainvoke({"query": "pytest"}, config)) == []


async def test_a_store_item_can_be_corrected_like_any_observation(
    store: PlaitStore, memory: Memory
) -> None:
    await store.aput(("project", "team notes"), "on-call", {"content": "Ada is on call"})
    (observation,) = await memory.observations.listed("project")
    updated = await memory.observations.update(observation.id, title="Who is on call")
    assert updated.topic_key == observation.topic_key and updated.revision == 2
    item = await store.aget(("project", "team notes"), "on-call")
    assert item is not None and item.value == {"content": "Ada is on call"}
