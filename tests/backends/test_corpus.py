"""The per-session corpus: chunking, stemmed and trigram BM25, typo tolerance, fusion, replace."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plait.adapters.backends.corpus import CORPUS_FILE, SqliteCorpus, correct_words, fts_any
from plait.adapters.hosts.mcp.sandbox import PathOutsideWorktree, clamp_timeout, resolve_inside
from plait.state.corpus import chunk_text, query_words, reciprocal_rank_fusion, snippet


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[SqliteCorpus]:
    store = SqliteCorpus.in_data_dir(tmp_path)
    yield store
    store.close()


def test_chunk_text_splits_on_headings_and_stays_under_the_maximum() -> None:
    text = "\n\n".join(f"# Part {n}\n\n" + ("word " * 300) for n in range(4))
    chunks = chunk_text(text, target_bytes=1024, max_bytes=2048)
    assert len(chunks) >= 4
    assert all(len(chunk.text.encode()) <= 2048 for chunk in chunks)
    assert [chunk.title for chunk in chunks[:1]] == ["Part 0"]
    assert {chunk.title for chunk in chunks} == {f"Part {n}" for n in range(4)}


def test_chunk_text_cuts_a_single_huge_line() -> None:
    chunks = chunk_text("x" * 10_000, max_bytes=2048)
    assert len(chunks) == 5
    assert "".join(chunk.text for chunk in chunks) == "x" * 10_000


def test_query_words_and_fts_quoting() -> None:
    assert query_words('Run "the" TESTS, run') == ["run", "the", "tests"]
    assert fts_any(['a"b', "c"]) == '"a""b" OR "c"'


def test_correct_words_finds_the_close_vocabulary_word() -> None:
    assert correct_words(["pyhton"], ["python", "pytest", "java"]) == ["python"]
    assert correct_words(["python"], ["python"]) == []


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([[1, 2, 3], [2, 3], [2]])
    assert [item for item, _ in fused] == [2, 3, 1]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)


def test_snippet_centres_on_the_match() -> None:
    text = "a" * 500 + " needle " + "b" * 500
    cut = snippet(text, ["needle"], 100)
    assert "needle" in cut and cut.startswith("…") and cut.endswith("…")


async def test_corpus_typo_stemming_and_substring_search(corpus: SqliteCorpus) -> None:
    await corpus.index(
        "root", "notes", "# Tools\n\nWe run python scripts.\n\n# Pets\n\nCats sleep."
    )
    await corpus.index("root", "other", "Nothing relevant lives here.")
    assert [hit.source for hit in await corpus.search("root", "pyhton")] == ["notes"]
    assert [hit.source for hit in await corpus.search("root", "running")] == ["notes"]
    assert [hit.source for hit in await corpus.search("root", "ytho")] == ["notes"]
    assert await corpus.search("root", "elephant") == []
    hit = (await corpus.search("root", "python"))[0]
    assert hit.reference == "corpus:notes#0"


async def test_corpus_is_per_root_and_reindex_replaces(corpus: SqliteCorpus) -> None:
    await corpus.index("a", "doc", "alpha bravo")
    await corpus.index("b", "doc", "alpha charlie")
    assert [hit.text for hit in await corpus.search("b", "alpha")] == ["alpha charlie"]
    result = await corpus.index("a", "doc", "delta only")
    assert result.replaced == 1
    assert await corpus.search("a", "alpha") == []
    assert [hit.text for hit in await corpus.search("a", "delta")] == ["delta only"]
    await corpus.index("a", "doc", "alpha again", label="v2")
    stats = await corpus.stats("a")
    assert [(info.source, info.label) for info in stats.sources] == [("doc", ""), ("doc", "v2")]
    assert stats.chunks == 2


async def test_corpus_redacts_before_storing(corpus: SqliteCorpus, tmp_path: Path) -> None:
    await corpus.index("r", "env", "token <private>hunter2 secret</private> visible")
    hits = await corpus.search("r", "visible")
    assert hits and "hunter2" not in hits[0].text
    corpus.close()
    assert b"hunter2" not in (tmp_path / "corpus.sqlite3").read_bytes()


def test_resolve_inside_refuses_escapes_and_symlinks(tmp_path: Path) -> None:
    worktree = tmp_path / "tree"
    worktree.mkdir()
    (worktree / "ok.txt").write_text("x")
    (worktree / "link").symlink_to(tmp_path)
    assert resolve_inside(worktree, "ok.txt") == (worktree / "ok.txt").resolve()
    for escape in ("../secret", "/etc/passwd", "link/anything"):
        with pytest.raises(PathOutsideWorktree):
            resolve_inside(worktree, escape)


def test_clamp_timeout() -> None:
    assert clamp_timeout(None) == 30
    assert clamp_timeout(500) == 120
    assert clamp_timeout(2) == 2


async def test_corpus_typo_correction_is_per_root(corpus: SqliteCorpus) -> None:
    await corpus.index("a", "doc", "We write python scripts.")
    await corpus.index("b", "typo", "Somebody wrote pyhton here.")
    assert [hit.source for hit in await corpus.search("a", "pyhton")] == ["doc"]
    assert [hit.source for hit in await corpus.search("b", "pyhton")] == ["typo"]


async def test_corpus_drops_sources_older_than_its_time_to_live(tmp_path: Path) -> None:
    first = SqliteCorpus.in_data_dir(tmp_path, ttl_days=1)
    await first.index("a", "old", "The deployment runbook for staging.")
    await first.index("a", "new", "The deployment checklist for production.")
    first.close()
    with sqlite3.connect(tmp_path / CORPUS_FILE) as connection:  # indexed two days ago
        connection.execute(
            "UPDATE chunks SET indexed_at = ? WHERE source = 'old'", (time.time() - 2 * 86_400,)
        )
    kept = SqliteCorpus.in_data_dir(tmp_path, ttl_days=0)  # 0 keeps everything
    assert {hit.source for hit in await kept.search("a", "deployment")} == {"old", "new"}
    kept.close()
    reopened = SqliteCorpus.in_data_dir(tmp_path, ttl_days=1)
    assert [hit.source for hit in await reopened.search("a", "deployment")] == ["new"]
    assert [hit.source for hit in await reopened.search("a", "runbook staging")] == []
    assert await reopened.chunk("a", "old", 0) is None
    reopened.close()


def page(seed: int, size: int) -> str:
    """Text of about ``size`` bytes whose words are unique to it (so nothing compresses away)."""
    words = [f"w{seed}x{n:06d}" for n in range(size // 10)]
    return "\n\n".join(" ".join(words[i : i + 40]) for i in range(0, len(words), 40))


async def test_corpus_keeps_each_root_within_its_cap_dropping_the_oldest(tmp_path: Path) -> None:
    corpus = SqliteCorpus.in_data_dir(tmp_path, max_bytes_per_root=250_000)
    try:
        for number in range(5):
            result = await corpus.index("root", f"doc-{number}", page(number, 100_000))
            await corpus.index("other", f"doc-{number}", page(number, 1_000))
        assert result.evicted == ("doc-2",)
        kept = await corpus.stats("root")
        assert [info.source for info in kept.sources] == ["doc-3", "doc-4"]
        assert kept.bytes <= 250_000
        assert len((await corpus.stats("other")).sources) == 5  # other roots keep theirs
        assert await corpus.chunk("root", "doc-0", 0) is None
        assert (await corpus.search("root", "w4x000001"))[0].source == "doc-4"
    finally:
        corpus.close()


async def test_corpus_file_gives_back_what_was_dropped(tmp_path: Path) -> None:
    corpus = SqliteCorpus.in_data_dir(tmp_path, max_bytes_per_root=300_000)
    path = tmp_path / CORPUS_FILE
    try:
        for number in range(3):
            await corpus.index("root", f"doc-{number}", page(number, 100_000))
        full = path.stat().st_size
        for number in range(3, 30):
            await corpus.index("root", f"doc-{number}", page(number, 100_000))
        assert path.stat().st_size < full * 2  # 30 pages indexed; the file holds about 3
        for number in range(27, 30):
            await corpus.remove("root", f"doc-{number}")
        assert path.stat().st_size < full
    finally:
        corpus.close()


def test_an_older_corpus_file_is_switched_to_incremental_vacuum(tmp_path: Path) -> None:
    path = tmp_path / CORPUS_FILE
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE leftover (x)")
    path.chmod(0o644)
    corpus = SqliteCorpus.in_data_dir(tmp_path)
    try:
        connection = corpus._connect()
        assert connection.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert path.stat().st_mode & 0o777 == 0o600
    finally:
        corpus.close()


async def test_corpus_source_names_and_labels_are_redacted(corpus: SqliteCorpus) -> None:
    secret = "ghp_b6s7U7bm8ZaDdIzPLzyibXQknMzAA98DyAJ1"
    source = f"https://x:{secret}@github.com/acme/repo?token={secret}"
    result = await corpus.index("root", source, "alpha beta", label=f"DB_PASS={secret}")
    assert secret not in result.source and secret not in result.label
    assert (await corpus.search("root", "alpha", source=source))[0].source == result.source
    assert await corpus.remove("root", source, label=f"DB_PASS={secret}") == 1
