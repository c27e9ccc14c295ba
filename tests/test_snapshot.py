"""Folding events into the snapshot: supersede, complete, resolve, bounded, incremental."""

from __future__ import annotations

from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import CAPS, Snapshot, fold_snapshot


def ev(kind: EventKind, summary: str, key: str = "", **extra) -> SessionEvent:
    return SessionEvent(
        root_session_id="s", session_id="s", kind=kind, summary=summary, key=key, **extra
    )


def test_snapshot_reversed_decision_leaves() -> None:
    snapshot = fold_snapshot(
        Snapshot(), [ev(EventKind.DECISION, "We decided to use SQLite for the cache")]
    )
    reversal = ev(EventKind.DECISION, "Use Redis instead.", keywords=("not:sqlite",))
    snapshot = fold_snapshot(snapshot, [reversal])
    assert [d.text for d in snapshot.decisions] == ["Use Redis instead."]


def test_snapshot_completed_task_leaves_and_updates_replace() -> None:
    snapshot = fold_snapshot(
        Snapshot(),
        [
            ev(EventKind.TASK_UPDATE, "write tests [pending]", key="todo:1"),
            ev(EventKind.TASK_UPDATE, "write docs [pending]", key="todo:2"),
            ev(EventKind.TASK_UPDATE, "write tests [in_progress]", key="todo:1"),
        ],
    )
    assert [t.text for t in snapshot.tasks] == ["write docs [pending]", "write tests [in_progress]"]
    snapshot = fold_snapshot(
        snapshot, [ev(EventKind.TASK_COMPLETE, "write tests [completed]", key="todo:1")]
    )
    assert [t.key for t in snapshot.tasks] == ["todo:2"]


def test_snapshot_resolved_error_leaves() -> None:
    snapshot = fold_snapshot(
        Snapshot(),
        [
            ev(EventKind.ERROR, "pytest: 1 failed", key="cmd:pytest"),
            ev(EventKind.ERROR, "mypy: bad type", key="cmd:mypy"),
            ev(EventKind.ERROR_RESOLVED, "pytest succeeded", key="cmd:pytest"),
        ],
    )
    assert [e.key for e in snapshot.errors] == ["cmd:mypy"]


def test_snapshot_files_most_recent_last_without_repeats() -> None:
    snapshot = fold_snapshot(
        Snapshot(),
        [
            ev(EventKind.FILE_READ, "read a.py", key="a.py"),
            ev(EventKind.FILE_EDIT, "edited b.py", key="b.py"),
            ev(EventKind.FILE_EDIT, "edited a.py", key="a.py"),
        ],
    )
    assert [f.text for f in snapshot.files] == ["b.py (edited)", "a.py (edited)"]
    assert [e.key for e in snapshot.edits] == ["b.py", "a.py"]


def test_snapshot_stays_bounded_however_long_the_session() -> None:
    kinds = list(EventKind)
    snapshot = Snapshot()
    sizes = []
    for batch in range(50):
        events = [
            ev(kinds[i % len(kinds)], f"event {batch}-{i} " + "x" * 150, key=f"k{batch}-{i}")
            for i in range(200)
        ]
        snapshot = fold_snapshot(snapshot, events)
        sizes.append(len(snapshot.model_dump_json()))
    assert snapshot.events_folded == 10_000
    for section, cap in CAPS.items():
        assert len(getattr(snapshot, section)) <= cap
    assert max(sizes[10:]) <= max(sizes[:10]) * 1.1


def test_snapshot_fold_is_pure_and_a_snapshot_replaces() -> None:
    original = Snapshot()
    folded = fold_snapshot(original, [ev(EventKind.RULE, "always run ruff")])
    assert original.rules == [] and len(folded.rules) == 1
    assert fold_snapshot(folded, Snapshot()) == Snapshot()
    assert fold_snapshot(folded, []) is folded


def test_snapshot_duplicates_are_recognised() -> None:
    decision = ev(EventKind.DECISION, "use Redis")
    snapshot = fold_snapshot(Snapshot(), [decision])
    assert snapshot.is_duplicate(decision)
    assert not snapshot.is_duplicate(ev(EventKind.DECISION, "use Postgres"))
    error = ev(EventKind.ERROR, "pytest: failed", key="cmd:pytest")
    snapshot = fold_snapshot(
        snapshot, [error, ev(EventKind.ERROR_RESOLVED, "ok", key="cmd:pytest")]
    )
    assert not snapshot.is_duplicate(error)


def test_snapshot_round_trips_through_json() -> None:
    snapshot = fold_snapshot(
        Snapshot(), [ev(EventKind.DECISION, "use Redis"), ev(EventKind.PROMPT, "go")]
    )
    assert Snapshot.model_validate_json(snapshot.model_dump_json()) == snapshot
