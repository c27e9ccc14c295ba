"""LangGraph's ``BaseStore`` over plait's observations: ``runtime.store``, LangMem's tools.

Namespaces start with ``"project"`` (the project's memory) or ``"user"`` (the user's personal
memory, shared across projects); the rest of the namespace and the key are the observation's
topic key (``lg:<label>/…/<key>``, percent-encoded), so a put with the same key updates the
item and keeps the previous value as a revision, like any observation. The value is kept as it
was put (secrets redacted); its text (``value["content"]`` when it is a string, else the JSON)
is what search ranks and what long-term memory and the envelope see.

Observations saved by other means (the ``memory_*`` tools, a person) appear under
``("project", "observations")`` and ``("user", "observations")``, keyed by id, with their
title, type, content, topic key and files as the value.

The store is async (``aget``/``aput``/``asearch``/``alist_namespaces``); the sync methods work
from other threads (LangGraph runs sync nodes and tools in worker threads) while the store's
event loop runs.
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from plait.state.base.errors import UsageError
from plait.state.observations import (
    OBSERVATION_TYPES,
    STORE_TOPIC_PREFIX,
    Observation,
    ObservationDraft,
    ObservationSource,
    Scope,
    check_type,
)

if TYPE_CHECKING:
    from plait.memory import Memory
    from plait.observations import Observations

ROOTS: dict[str, Scope] = {"project": "project", "user": "personal"}
ROOT_OF: dict[Scope, str] = {"project": "project", "personal": "user"}
OBSERVATIONS_LABEL = "observations"
TITLE_MAX_CHARS = 120
SOURCE = ObservationSource(kind="tool", name="langgraph.store")
COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


# -- namespaces and keys --------------------------------------------------------------------------
def scope_of(namespace: tuple[str, ...]) -> Scope:
    """The scope a namespace's first label names (``project`` or ``user``)."""
    if not namespace or namespace[0] not in ROOTS:
        raise UsageError(
            f"namespace: {namespace!r} must start with 'project' or 'user' "
            "(e.g. ('user', 'memories'))"
        )
    return ROOTS[namespace[0]]


def topic_for(namespace: tuple[str, ...], key: str) -> str:
    """The topic key of an item: ``lg:`` and the labels after the root, then the key."""
    if not key:
        raise UsageError("key: missing")
    return STORE_TOPIC_PREFIX + "/".join(quote(part, safe="") for part in (*namespace[1:], key))


def item_address(observation: Observation) -> tuple[tuple[str, ...], str]:
    """The namespace and key an observation is found at."""
    root = ROOT_OF[observation.scope]
    if not observation.topic_key.startswith(STORE_TOPIC_PREFIX):
        return (root, OBSERVATIONS_LABEL), observation.id
    parts = [unquote(p) for p in observation.topic_key[len(STORE_TOPIC_PREFIX) :].split("/")]
    return (root, *parts[:-1]), parts[-1]


def item_value(observation: Observation) -> dict[str, Any]:
    """The value of an item: as it was put, or an observation's own fields."""
    if observation.data is not None:
        return observation.data
    return {
        "title": observation.title,
        "type": observation.type,
        "content": observation.content,
        "topic_key": observation.topic_key,
        "files": list(observation.files),
    }


def value_text(value: dict[str, Any]) -> str:
    """The text of a value: its ``content`` string, else the value as JSON."""
    content = value.get("content")
    if isinstance(content, str) and content.strip():
        return content
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def value_title(value: dict[str, Any], text: str, key: str) -> str:
    """A title for a value: its ``title``, else the start of its text, else the key."""
    title = value.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()[:TITLE_MAX_CHARS]
    first = " ".join(text.split())[:TITLE_MAX_CHARS]
    return first or key


def draft_for(namespace: tuple[str, ...], key: str, given: Any) -> ObservationDraft:
    """What a put saves."""
    if not isinstance(given, Mapping):
        raise UsageError(f"value: give a dict, not {type(given).__name__}")
    value = dict(given)
    text = value_text(value)
    kind = check_type(value["type"]) if value.get("type") in OBSERVATION_TYPES else "learning"
    return ObservationDraft(
        title=value_title(value, text, key),
        content=text,
        type=kind,
        scope=scope_of(namespace),
        topic_key=topic_for(namespace, key),
        source=SOURCE,
        data=value,
    )


def matches_filter(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    """Whether a value passes a search filter (equality, or ``$eq``/``$ne``/``$gt``… operators)."""
    for field, expected in (wanted or {}).items():
        actual = value.get(field)
        if isinstance(expected, dict) and expected and all(k in COMPARISONS for k in expected):
            try:
                if not all(COMPARISONS[op](actual, bound) for op, bound in expected.items()):
                    return False
            except TypeError:
                return False
        elif actual != expected:
            return False
    return True


def matches_condition(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    """Whether a namespace matches a prefix or suffix condition (``*`` matches any label)."""
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(want in ("*", got) for want, got in zip(path, part, strict=True))


class PlaitStore(BaseStore):
    """A LangGraph store whose items are plait observations."""

    supports_ttl = False

    def __init__(self, memory: Memory | Observations) -> None:
        """Use a project's ``Memory`` (or its ``observations``)."""
        self.observations: Observations = (
            memory.observations if hasattr(memory, "observations") else memory
        )
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the two batch methods ----------------------------------------------------------------
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order."""
        self._loop = asyncio.get_running_loop()
        return [await self._run(op) for op in ops]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations on the store's event loop, from another thread."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or not loop.is_running():
            raise UsageError(
                "PlaitStore is async: use aget/aput/asearch, or call the sync methods from "
                "another thread while the store's event loop runs"
            )
        return asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), loop).result()

    async def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(op)
        if isinstance(op, PutOp):
            await self._put(op)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(op)
        raise UsageError(f"unknown store operation {type(op).__name__}")

    # -- operations ---------------------------------------------------------------------------
    async def _find(self, namespace: tuple[str, ...], key: str) -> Observation | None:
        scope = scope_of(namespace)
        group = self.observations.group_of(scope)
        found = await self.observations.store.observation_for_topic(
            group, topic_for(namespace, key)
        )
        if found is None and namespace[1:] == (OBSERVATIONS_LABEL,):
            found = await self.observations.store.get_observation(group, key)
        return found

    async def _get(self, op: GetOp) -> Item | None:
        found = await self._find(op.namespace, op.key)
        return None if found is None else self._item(found)

    async def _put(self, op: PutOp) -> None:
        if op.value is None:
            found = await self._find(op.namespace, op.key)
            if found is not None:
                await self.observations.delete(found.id)
            return
        await self.observations.save(draft_for(op.namespace, op.key, op.value))

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        scopes = [scope_of(prefix)] if prefix else list(ROOT_OF)
        items: list[tuple[Observation, float | None]] = []
        for scope in scopes:
            items += await self._scored(scope, op.query)
        kept = [
            (o, score)
            for o, score in items
            if item_address(o)[0][: len(prefix)] == prefix
            and matches_filter(item_value(o), op.filter)
        ]
        kept.sort(key=lambda pair: (-(pair[1] or 0.0), -pair[0].updated_at.timestamp()))
        return [self._search_item(o, s) for o, s in kept[op.offset : op.offset + op.limit]]

    async def _scored(
        self, scope: Scope, query: str | None
    ) -> list[tuple[Observation, float | None]]:
        if not query:
            return [(o, None) for o in await self.observations.listed(scope, current=True)]
        found = await self.observations.search(query, limit=10_000, scope=scope)
        return [(o, score) for o, score in found]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces: set[tuple[str, ...]] = set()
        for observation in await self.observations.listed(current=True):
            namespace = item_address(observation)[0]
            if op.max_depth is not None:
                namespace = namespace[: op.max_depth]
            if all(matches_condition(namespace, c) for c in op.match_conditions or ()):
                namespaces.add(namespace)
        return sorted(namespaces)[op.offset : op.offset + op.limit]

    # -- items ----------------------------------------------------------------------------------
    @staticmethod
    def _item(observation: Observation) -> Item:
        namespace, key = item_address(observation)
        return Item(
            value=item_value(observation),
            key=key,
            namespace=namespace,
            created_at=observation.created_at,
            updated_at=observation.updated_at,
        )

    @staticmethod
    def _search_item(observation: Observation, score: float | None) -> SearchItem:
        namespace, key = item_address(observation)
        return SearchItem(
            namespace=namespace,
            key=key,
            value=item_value(observation),
            created_at=observation.created_at,
            updated_at=observation.updated_at,
            score=score,
        )


__all__ = ["PlaitStore", "item_address", "topic_for"]
