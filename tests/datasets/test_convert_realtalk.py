"""``datasets/convert_realtalk.py`` on chats in REALTALK's own shape, then the bench's reader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.dataset_scripts import DATASETS, load_script

from plait.devtools.recall import dialog_ids, load_dataset

SCRIPT = DATASETS / "convert_realtalk.py"


@pytest.fixture(scope="module")
def converter() -> ModuleType:
    return load_script("convert_realtalk")


def message(dia_id: str, speaker: str, text: str, when: str) -> dict[str, Any]:
    """One message as REALTALK writes it."""
    return {
        "clean_text": text,
        "speaker": speaker,
        "date_time": when,
        "img_file": [],
        "img_url": [],
        "dia_id": dia_id,
    }


def chat() -> dict[str, Any]:
    """Two sessions; dialog ids skip a removed message; evidence written in REALTALK's ways."""
    return {
        "name": {"speaker_1": "Emi", "speaker_2": "elise"},
        "session_1": [
            message("D1:1", "Emi", "Hey! How are you?", "29.12.2023, 22:42:04"),
            message("D1:2", "elise", "I work at UCLA as a teacher assistant.", "30.12.2023, 00:32"),
            message("D1:4", "Emi", "", "30.12.2023, 00:33:00"),
        ],
        "events_session_1": {},
        "session_1_date_time": "29.12.2023, 22:42:04",
        "session_2": [
            message("D2:1", "elise", "We flew to Miami.", "10.01.2024, 02:20:59"),
            message("D2:2", "Emi", "Then Los Angeles!", "10.01.2024, 02:21:58"),
            message("D2:3", "elise", "And San Diego.", "10.01.2024, 02:22:10"),
        ],
        "session_2_date_time": "10.01.2024, 02:20:59",
        "qa": [
            {
                "question": "Where does Elise work?",
                "answer": "UCLA",
                "evidence": ["D1:2."],
                "category": 1,
            },
            {
                "question": "Which cities?",
                "answer": "Miami, LA, San Diego",
                "evidence": ["D2:1-D2:3;D1:3"],
                "category": 2,
            },
            {
                "question": "What did Emi say?",
                "answer": "-",
                "evidence": ["D:56", ""],
                "category": 3,
            },
        ],
    }


def test_each_chat_is_a_conversation_with_repaired_evidence(converter: ModuleType) -> None:
    dataset, dropped = converter.convert({"Chat_1_Emi_Elise": chat()})
    (conversation,) = dataset.conversations
    assert [s.id for s in conversation.sessions] == ["s1", "s2"]
    assert conversation.sessions[1].started_at.isoformat() == "2024-01-10T02:20:59+00:00"
    assert [t.id for t in conversation.sessions[0].turns] == [
        "Chat_1_Emi_Elise:D1:1",
        "Chat_1_Emi_Elise:D1:2",
    ]
    first, cities = conversation.questions
    assert first.evidence == ["Chat_1_Emi_Elise:D1:2"] and first.category == "multi-hop"
    assert cities.category == "temporal"
    assert cities.evidence == [f"Chat_1_Emi_Elise:D2:{n}" for n in (1, 2, 3)]
    assert dropped == {
        "messages without text": 1,
        "evidence ids naming no turn": 1,  # D1:3, removed by REALTALK's cleaning
        "evidence entries not a dialog id": 2,  # "D:56" and ""
        "questions without evidence": 1,
    }


def test_dialog_ids_are_repaired_where_the_intent_is_plain() -> None:
    assert dialog_ids(["D8:6; D9:17", "D:11:26", "D30:05", "D5:3."]) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
        "D5:3",
    ]
    assert dialog_ids(["D12:3-D12:5", "D4:7-8", "D9:1 D4:4"]) == [
        "D12:3",
        "D12:4",
        "D12:5",
        "D4:7",
        "D4:8",
        "D9:1",
        "D4:4",
    ]
    assert dialog_ids(["", "D58", "D"]) == []


def test_the_command_writes_a_dataset_the_bench_reads(tmp_path: Path) -> None:
    for number in (10, 2):
        (tmp_path / f"Chat_{number}_A_B.json").write_text(json.dumps(chat()))
    output = tmp_path / "out.json"
    sources = sorted(str(p) for p in tmp_path.glob("Chat_*.json"))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *sources, "-o", str(output)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "10 turns, 4 questions" in done.stderr
    dataset = load_dataset(output)
    assert [c.id for c in dataset.conversations] == ["Chat_2_A_B", "Chat_10_A_B"]


def test_the_command_takes_the_data_folder_and_names_a_file_it_cannot_use(tmp_path: Path) -> None:
    (tmp_path / "Chat_1_A_B.json").write_text(json.dumps(chat()))
    output = tmp_path / "out.json"
    command = [sys.executable, str(SCRIPT), str(tmp_path), "-o", str(output)]
    subprocess.run(command, capture_output=True, text=True, check=True)
    assert [c.id for c in load_dataset(output).conversations] == ["Chat_1_A_B"]
    (tmp_path / "Chat_2_A_B.json").write_text("{not json")
    failed = subprocess.run(command, capture_output=True, text=True)
    assert failed.returncode == 2 and "Chat_2_A_B.json: not JSON" in failed.stderr
    (tmp_path / "Chat_2_A_B.json").write_text(json.dumps({"qa": []}))
    failed = subprocess.run(command, capture_output=True, text=True)
    assert "Chat_2_A_B.json: not a REALTALK chat" in failed.stderr
