"""Knowledge, not chatter: what reaches the graph and what <persistent_memory> shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plait.nodes.drain import without_repeated_events, without_superseded
from plait.nodes.lasting import is_lasting, is_transient_failure, select_hits
from plait.nodes.memory_search import place_facts
from plait.nodes.statements import shared_turn
from plait.state.events import FORGOTTEN, EventKind, SessionEvent
from plait.state.ports import MemoryHit, QueueEntry
from plait.state.recall import queued_turns
from plait.state.snapshot import Snapshot

NOW = datetime.now(UTC)


def ev(kind: EventKind, summary: str, body: str = "") -> SessionEvent:
    return SessionEvent(root_session_id="s", session_id="s", kind=kind, summary=summary, body=body)


def hit(kind: str, text: str, uuid: str = "", **rest: object) -> MemoryHit:
    return MemoryHit(uuid=uuid or text, kind=kind, text=text, score=1.0, valid_at=NOW, **rest)  # type: ignore[arg-type]


def test_only_lasting_knowledge_goes_to_the_graph() -> None:
    assert is_lasting(ev(EventKind.DECISION, "Use Redis for the export cache"))
    assert is_lasting(ev(EventKind.ERROR, "mypy: app/cache.py:12: incompatible return value"))
    assert is_lasting(ev(EventKind.ERROR_RESOLVED, "pin psycopg to 3.1 to fix the pool crash"))
    assert not is_lasting(ev(EventKind.PROMPT, "What did we just change?"))
    assert not is_lasting(ev(EventKind.TASK_UPDATE, "Add tests [in_progress]"))
    assert not is_lasting(ev(EventKind.ERROR, "glob: ripgrep execution failed"))
    assert not is_lasting(ev(EventKind.ERROR, "fetch: connection refused"))
    assert not is_lasting(ev(EventKind.ERROR_RESOLVED, "pytest succeeded"))
    assert not is_lasting(ev(EventKind.GIT, "branch feature/x"))
    assert is_lasting(ev(EventKind.GIT, "git commit -am 'Add CSV export'"))
    assert is_transient_failure("HTTP 503 Service Unavailable") and not is_transient_failure(
        "AssertionError: expected 3"
    )


def test_persistent_memory_says_each_fact_once_without_keys_or_stale_states() -> None:
    hits = [
        hit("fact", "Decided: Use Redis instead, we already run it. (topic: topic:export)"),
        hit("decision", "Use Redis instead, we already run it."),
        hit(
            "entity", "export: Decided: Use Redis instead, we already run it. (topic: topic:export)"
        ),
        hit("prompt", "What did we just change?"),
        hit("fact", "Task update: Add the CSV export endpoint [in_progress]"),
        hit("fact", "Error: glob: ripgrep execution failed"),
        hit("decision", "Use SQLite", invalid_at=NOW - timedelta(days=1)),
        hit("rule", "Rule: never commit directly to main"),
    ]
    shown = select_hits(hits, 10)
    assert [h.text for h in shown] == [
        "Decided: Use Redis instead, we already run it.",
        "never commit directly to main",
    ]
    assert len(select_hits(hits, 1)) == 1


def test_facts_follow_the_turn_they_were_read_from() -> None:
    turns = [hit("decision", "a", "t1"), hit("prompt", "b", "t2")]
    facts = [hit("fact", "from t2", "f1", episodes=("t2",)), hit("fact", "loose", "f2")]
    assert [h.uuid for h in place_facts(turns, facts)] == ["t1", "t2", "f1", "f2"]


def entry(n: int, kind: EventKind, summary: str, key: str = "") -> QueueEntry:
    event = SessionEvent(
        id=n, root_session_id="s", session_id="s", kind=kind, summary=summary, key=key
    )
    return QueueEntry(entry_id=f"{n}-0", group_id="g", event=event, deliveries=1)


def test_a_batch_sends_the_graph_only_what_holds_now() -> None:
    batch = [
        entry(1, EventKind.DECISION, "Use SQLite for the cache", "topic:cache"),
        entry(2, EventKind.DECISION, "Use Redis for the cache", "topic:cache"),
        entry(3, EventKind.RULE, "Never commit to main", "topic:git"),
        entry(4, EventKind.RULE, "Never commit to main", "topic:git"),
    ]
    kept = without_superseded(without_repeated_events(batch))
    assert [c.event.summary for c in kept] == ["Use Redis for the cache", "Never commit to main"]


def test_the_recall_index_gets_all_but_raw_output_and_preferences_go_to_the_user() -> None:
    batch = [
        entry(1, EventKind.PROMPT, "What did we just change?"),
        entry(2, EventKind.MESSAGE, "The retry now backs off exponentially, capped at 30 s."),
        entry(3, EventKind.PREFERENCE, "I prefer small pull requests"),
        entry(4, EventKind.TOOL_RESULT, "collected 143 items; 143 passed"),
        entry(5, EventKind.MESSAGE, FORGOTTEN),  # what a forgotten event leaves behind
    ]
    turns = queued_turns(batch, "plait", "ada")
    assert [(t.kind, t.group_id) for t in turns] == [
        ("prompt", "g"),
        ("message", "g"),
        ("preference", "plait-user-ada"),
    ]
    member = batch[2].model_copy(
        update={"event": batch[2].event.model_copy(update={"member": "alice"})}
    )
    assert [t.group_id for t in queued_turns([member], "plait", "ada")] == ["plait-user-alice"]


def test_a_prompts_preferences_stay_out_of_the_projects_turns() -> None:
    said = [
        entry(1, EventKind.PROMPT, "I prefer tabs over spaces. Add a CSV export to the report."),
        entry(2, EventKind.PREFERENCE, "I prefer tabs over spaces"),
        entry(3, EventKind.PROMPT, "I like dark mode in every UI I touch."),
        entry(4, EventKind.PROMPT, "Fix the flaky test in api.py."),
    ]
    alice = {"member": "alice"}
    batch = [e.model_copy(update={"event": e.event.model_copy(update=alice)}) for e in said]
    turns = queued_turns(batch, "plait", "ada", shared_turn)
    assert [(t.group_id, t.text) for t in turns] == [
        ("g", "Add a CSV export to the report."),
        ("plait-user-alice", "I prefer tabs over spaces"),
        ("g", "Fix the flaky test in api.py."),  # nothing but the preference: no project turn
    ]
    # the service owner's turns stay whole
    assert [t.text for t in queued_turns(said[:1], "plait", "ada", shared_turn)] == [
        said[0].event.summary
    ]


def test_the_envelope_says_a_decision_once_when_the_session_already_has_it() -> None:
    from plait.nodes.envelope import compose_envelope
    from plait.state.snapshot import fold_snapshot

    snapshot = fold_snapshot(
        Snapshot(), [ev(EventKind.DECISION, "Use Redis instead, we already run it.")]
    )
    persistent = (
        "- [decision] Use Redis instead, we already run it. (since 2026-11-23)\n"
        "- [rule] never commit directly to main (since 2026-11-20)"
    )
    envelope = compose_envelope(
        snapshot, persistent=persistent, budget_bytes=6000, snapshot_budget_bytes=3000
    )
    assert envelope.count("Use Redis instead") == 1
    assert "never commit directly to main" in envelope
