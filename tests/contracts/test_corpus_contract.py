"""One contract suite, run over every Corpus: SQLite (FTS5) and in-memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plait.adapters.backends.corpus import SqliteCorpus
from plait.adapters.backends.memory_corpus import InMemoryCorpus
from plait.state.corpus import Corpus


@pytest.fixture(params=["sqlite", "memory"])
def corpus(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Corpus]:
    store: Corpus = (
        SqliteCorpus.in_data_dir(tmp_path) if request.param == "sqlite" else InMemoryCorpus()
    )
    yield store
    store.close()


def test_corpus_implementations_satisfy_the_protocol(corpus: Corpus) -> None:
    assert isinstance(corpus, Corpus)


async def test_corpus_finds_chunks_by_their_words(corpus: Corpus) -> None:
    await corpus.index(
        "root", "notes", "# Tools\n\nWe run python scripts.\n\n# Pets\n\nCats sleep."
    )
    await corpus.index("root", "other", "Nothing relevant lives here.")
    hits = await corpus.search("root", "python scripts")
    assert [hit.source for hit in hits] == ["notes"]
    assert hits[0].reference == "corpus:notes#0" and "python" in hits[0].text
    assert await corpus.search("root", "elephant") == []
    assert await corpus.search("root", "python", source="other") == []


async def test_corpus_is_per_root_and_reindex_replaces(corpus: Corpus) -> None:
    await corpus.index("a", "doc", "alpha bravo")
    await corpus.index("b", "doc", "alpha charlie")
    assert [hit.text for hit in await corpus.search("b", "alpha")] == ["alpha charlie"]
    result = await corpus.index("a", "doc", "delta only")
    assert result.replaced == 1 and result.chunks == 1
    assert await corpus.search("a", "alpha") == []
    await corpus.index("a", "doc", "alpha again", label="v2")
    stats = await corpus.stats("a")
    assert [(info.source, info.label) for info in stats.sources] == [("doc", ""), ("doc", "v2")]
    assert stats.chunks == 2 and stats.bytes == len("delta only") + len("alpha again")


async def test_corpus_reads_a_chunk_back_and_removes_a_source(corpus: Corpus) -> None:
    text = "\n\n".join(f"# Part {n}\n\n" + ("word " * 300) for n in range(3))
    result = await corpus.index("r", "long", text)
    assert result.chunks >= 3
    second = await corpus.chunk("r", "long", 1)
    assert second is not None and second.chunk_no == 1 and second.title.startswith("Part")
    assert await corpus.chunk("r", "long", 99) is None
    assert await corpus.remove("r", "long") == result.chunks
    assert await corpus.chunk("r", "long", 0) is None and (await corpus.stats("r")).chunks == 0


async def test_corpus_redacts_before_storing(corpus: Corpus) -> None:
    await corpus.index("r", "env", "token <private>hunter2 secret</private> visible")
    await corpus.index(
        "r", "keys", "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    )
    hits = await corpus.search("r", "visible export")
    assert hits and all("hunter2" not in hit.text and "sk-proj-" not in hit.text for hit in hits)


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
async def test_corpus_over_its_cap_drops_the_oldest_sources_of_that_root(
    kind: str, tmp_path: Path
) -> None:
    capped: Corpus = (
        SqliteCorpus.in_data_dir(tmp_path, max_bytes_per_root=2000)
        if kind == "sqlite"
        else InMemoryCorpus(max_bytes_per_root=2000)
    )
    try:
        for name in ("one", "two", "six"):  # 800 bytes each
            result = await capped.index("root", name, f"{name} " * 200)
        await capped.index("elsewhere", "one", "one " * 200)
        assert result.evicted == ("one",)
        assert [info.source for info in (await capped.stats("root")).sources] == ["two", "six"]
        assert (await capped.stats("elsewhere")).chunks == 1
        again = await capped.index("root", "two", "two again")  # re-indexed: now the newest
        assert again.evicted == ()
        assert [info.source for info in (await capped.stats("root")).sources] == ["six", "two"]
    finally:
        capped.close()
