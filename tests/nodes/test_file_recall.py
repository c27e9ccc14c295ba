"""Recall at the point of action, as a pure function of the snapshot and the tool call."""

from __future__ import annotations

from plait.nodes.file_recall import FILE_MEMORY_MAX, file_memory, touched_files
from plait.state.snapshot import Item, Snapshot


def snapshot() -> Snapshot:
    return Snapshot(
        rules=[Item(key="r1", text="Never log card numbers in billing/charge.py")],
        decisions=[
            Item(key=f"d{n}", text=f"charge.py decision {n} " + "x" * 80) for n in range(30)
        ],
        errors=[Item(key="e1", text="pytest tests/test_other.py failed: ImportError")],
    )


def test_file_recall_names_the_files_an_edit_or_a_command_touches() -> None:
    assert touched_files("edit", {"file_path": "billing/charge.py"}) == ["billing/charge.py"]
    assert touched_files("bash", {"command": "sed -i s/a/b/ billing/charge.py"}) == [
        "billing/charge.py"
    ]
    assert touched_files("read", {"file_path": "billing/charge.py"}) == []


def test_file_recall_is_bounded_and_silent_when_nothing_is_known() -> None:
    block = file_memory(snapshot(), "edit", {"file_path": "billing/charge.py"})
    assert block.startswith('<file_memory path="billing/charge.py">')
    assert "<rule>Never log card numbers" in block and len(block) <= FILE_MEMORY_MAX
    assert file_memory(snapshot(), "write", {"file_path": "src/unknown.py"}) == ""
