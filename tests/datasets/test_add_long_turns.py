"""``datasets/add_long_turns.py``: long off-topic sessions added, the questions untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.dataset_scripts import DATASETS, load_script

from plait.devtools.recall import Dataset, load_dataset, parse_dataset

SCRIPT = DATASETS / "add_long_turns.py"


def conversation(cid: str, words: str) -> dict[str, Any]:
    """Two dated sessions of short turns, one question."""
    sessions = [
        {
            "id": f"s{n}",
            "started_at": f"2026-03-0{n}T10:00:00Z",
            "turns": [{"id": f"{cid}:s{n}:t{t}", "speaker": "user", "text": f"{words} {n}.{t}"}
                      for t in range(4)],
        }
        for n in (1, 5)
    ]  # fmt: skip
    question = {"id": f"{cid}:q", "text": words, "evidence": [f"{cid}:s1:t0"]}
    return {"id": cid, "sessions": sessions, "questions": [question]}


def dataset() -> Dataset:
    data = {
        "name": "tiny",
        "conversations": [conversation("a", "apples"), conversation("b", "bees")],
    }
    return parse_dataset(data)


def test_each_conversation_gets_long_turns_of_the_others_and_keeps_its_questions() -> None:
    longer = load_script("add_long_turns").with_long_turns(dataset(), sessions=3, turns=2, chunk=3)
    assert longer.name == "tiny+long"
    for original, grown in zip(dataset().conversations, longer.conversations, strict=True):
        added = [s for s in grown.sessions if s.id.startswith("long")]
        assert len(added) == 3 and all(len(s.turns) == 2 for s in added)
        own = original.sessions[0].turns[0].text.split()[0]
        assert all(own not in t.text and t.text.count("\n") == 2 for s in added for t in s.turns)
        first, last = original.sessions[0].started_at, original.sessions[-1].started_at
        assert all(first <= s.started_at <= last for s in added)
        assert [s.started_at for s in grown.sessions] == sorted(
            s.started_at for s in grown.sessions
        )
        assert grown.questions == original.questions
    again = load_script("add_long_turns").with_long_turns(dataset(), sessions=3, turns=2, chunk=3)
    assert again == longer  # seeded


def test_the_command_writes_a_dataset_the_bench_reads_and_refuses_one_conversation(
    tmp_path: Path,
) -> None:
    source, output = tmp_path / "in.json", tmp_path / "out.json"
    source.write_text(dataset().model_dump_json())
    command = [sys.executable, str(SCRIPT), str(source), "-o", str(output), "--sessions", "2"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "long turns added: 24" in done.stderr  # 2 sessions of 6, in each of 2 conversations
    assert len(list(load_dataset(output).conversations[0].turns())) == 8 + 12
    alone = json.loads(source.read_text())
    alone["conversations"] = alone["conversations"][:1]
    source.write_text(json.dumps(alone))
    refused = subprocess.run(command, capture_output=True, text=True)
    assert refused.returncode == 2 and "no other conversation" in refused.stderr
