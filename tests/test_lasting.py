"""Knowledge, not chatter: what reaches the graph and what <persistent_memory> shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plait.nodes.lasting import is_lasting, is_transient_failure, select_hits, without_repeats
from plait.nodes.memory_search import place_facts
from plait.state.events import EventKind, SessionEvent
from plait.state.ports import MemoryHit

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


def test_repeats_merge() -> None:
    events = [ev(EventKind.DECISION, "Use Redis"), ev(EventKind.DECISION, "use  redis")]
    assert len(without_repeats(events)) == 1


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
