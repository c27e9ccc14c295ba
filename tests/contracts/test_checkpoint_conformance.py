"""plait's Redis checkpointer against LangGraph's conformance suite: embedded server, cluster."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from plait.adapters.backends.checkpoint import AsyncRedisSaver
from plait.adapters.backends.redis_client import async_client


@pytest.mark.parametrize("where", ["redis", "redis-cluster"])
async def test_checkpointer_passes_all_eight_conformance_capabilities(
    where: str, request: pytest.FixtureRequest
) -> None:
    url = (
        request.getfixturevalue("redis_url")
        if where == "redis"
        else request.getfixturevalue("redis_cluster").url
    )

    @checkpointer_test(name=f"plait AsyncRedisSaver ({where})")
    async def saver_factory():  # type: ignore[no-untyped-def]
        client = async_client(url, socket_timeout=None)
        yield AsyncRedisSaver(client, prefix=f"conformance:{uuid.uuid4().hex}:")
        await client.aclose()

    report = await validate(saver_factory, progress=ProgressCallbacks.quiet())
    report.print_report()
    passed = {name for name, result in report.results.items() if result.passed is True}
    failures = {name: r.failures for name, r in report.results.items() if r.passed is not True}
    assert not failures, failures
    assert passed == {
        "put",
        "put_writes",
        "get_tuple",
        "list",
        "delete_thread",
        "delete_for_runs",
        "copy_thread",
        "prune",
    }
    assert sum(r.tests_passed for r in report.results.values()) > 0
    assert report.conformance_level() == "FULL"
