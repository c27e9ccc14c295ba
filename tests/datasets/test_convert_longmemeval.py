"""``datasets/convert_longmemeval.py`` on items in LongMemEval's own shape, then the bench's reader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.dataset_scripts import DATASETS, load_script

from plait.devtools.recall import load_dataset

SCRIPT = DATASETS / "convert_longmemeval.py"


@pytest.fixture(scope="module")
def converter() -> ModuleType:
    return load_script("convert_longmemeval")


def item(qid: str, kind: str, *, answered: bool = True) -> dict[str, Any]:
    """One question as LongMemEval writes it: its haystack, evidence marked per turn."""
    long_reply = "Here is a detailed plan. " * 200  # long assistant turns stay whole
    evidence: dict[str, Any] = {"role": "user", "content": "I moved to Lisbon in March."}
    if answered:
        evidence["has_answer"] = True
    return {
        "question_id": qid,
        "question_type": kind,
        "question": "Where do I live now?",
        "answer": "Lisbon",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["sharegpt_a_0", f"answer_{qid}"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/25 (Thu) 14:05"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Plan a trip for me."},
                {"role": "assistant", "content": long_reply},
            ],
            [evidence, {"role": "assistant", "content": "  "}],
        ],
        "answer_session_ids": [f"answer_{qid}"],
    }


def test_each_question_is_a_conversation_with_its_answer_turns_as_evidence(
    converter: ModuleType,
) -> None:
    items = [item("q1", "multi-session"), item("q2_abs", "knowledge-update", answered=False)]
    dataset, dropped = converter.convert(items)
    assert [c.id for c in dataset.conversations] == ["q1"]
    (conversation,) = dataset.conversations
    assert [s.id for s in conversation.sessions] == ["sharegpt_a_0", "answer_q1"]
    assert conversation.sessions[1].started_at.isoformat() == "2023-05-25T14:05:00+00:00"
    assert conversation.questions[0].evidence == ["q1:answer_q1:0"]
    assert conversation.questions[0].category == "multi-session"
    assert conversation.questions[0].asked_at.isoformat() == "2023-06-01T10:00:00+00:00"
    assert len(conversation.sessions[0].turns[1].text) > 4000, "a long turn is kept whole"
    assert dropped["questions without an answer turn (abstention)"] == 1
    assert dropped["empty turns"] == 2  # one in each haystack


def test_splits_partition_the_questions_and_limit_caps_each_category(
    converter: ModuleType,
) -> None:
    items = [item(f"q{n}", "multi-session" if n % 2 else "temporal-reasoning") for n in range(40)]
    dev = {c.id for c in converter.convert(items, split="dev")[0].conversations}
    test = {c.id for c in converter.convert(items, split="test")[0].conversations}
    assert dev and test and not dev & test and len(dev | test) == 40
    limited, dropped = converter.convert(items, limit=3)
    kinds = [c.questions[0].category for c in limited.conversations]
    assert sorted(kinds) == ["multi-session"] * 3 + ["temporal-reasoning"] * 3
    assert dropped["over --limit (multi-session)"] == 17


def test_the_command_writes_a_dataset_the_bench_reads(
    converter: ModuleType, tmp_path: Path
) -> None:
    source, output = tmp_path / "longmemeval_s.json", tmp_path / "out.json"
    source.write_text(json.dumps([item("q1", "single-session-user")]))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(source), "-o", str(output)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "3 turns, 1 questions" in done.stderr
    assert load_dataset(output).conversations[0].questions[0].evidence == ["q1:answer_q1:0"]
