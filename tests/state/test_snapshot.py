"""Folding events into the snapshot: supersede, complete, resolve, bounded, incremental."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import (
    CAPS,
    ERROR_AGE_EVENTS,
    FINGERPRINTS_MAX,
    TRANSIENT,
    TRANSIENT_ERROR_AGE_EVENTS,
    Snapshot,
    drop_duplicates,
    fold_snapshot,
    is_read_only,
)


def ev(kind: EventKind, summary: str, key: str = "", **extra) -> SessionEvent:
    return SessionEvent(
        root_session_id="s", session_id="s", kind=kind, summary=summary, key=key, **extra
    )


def folded(*events: SessionEvent) -> Snapshot:
    """A fresh snapshot with ``events`` folded in."""
    return fold_snapshot(Snapshot(), list(events))


def test_snapshot_reversed_decision_leaves() -> None:
    snapshot = fold_snapshot(
        Snapshot(), [ev(EventKind.DECISION, "We decided to use SQLite for the cache")]
    )
    reversal = ev(EventKind.DECISION, "Use Redis instead.", keywords=("not:sqlite",))
    snapshot = fold_snapshot(snapshot, [reversal])
    assert [d.text for d in snapshot.decisions] == ["Use Redis instead."]


def test_snapshot_completed_task_leaves_and_updates_replace() -> None:
    snapshot = folded(
        ev(EventKind.TASK_UPDATE, "write tests [pending]", key="todo:1"),
        ev(EventKind.TASK_UPDATE, "write docs [pending]", key="todo:2"),
        ev(EventKind.TASK_UPDATE, "write tests [in_progress]", key="todo:1"),
    )
    assert [t.text for t in snapshot.tasks] == ["write docs [pending]", "write tests [in_progress]"]
    snapshot = fold_snapshot(
        snapshot, [ev(EventKind.TASK_COMPLETE, "write tests [completed]", key="todo:1")]
    )
    assert [t.key for t in snapshot.tasks] == ["todo:2"]


def test_snapshot_resolved_error_leaves() -> None:
    snapshot = folded(
        ev(EventKind.ERROR, "pytest: 1 failed", key="cmd:pytest"),
        ev(EventKind.ERROR, "mypy: bad type", key="cmd:mypy"),
        ev(EventKind.ERROR_RESOLVED, "pytest succeeded", key="cmd:pytest"),
    )
    assert [e.key for e in snapshot.errors] == ["cmd:mypy"]


def test_snapshot_files_most_recent_last_without_repeats() -> None:
    snapshot = folded(
        ev(EventKind.FILE_READ, "read a.py", key="a.py"),
        ev(EventKind.FILE_EDIT, "edited b.py", key="b.py"),
        ev(EventKind.FILE_EDIT, "edited a.py", key="a.py"),
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


# -- supersede, resolve, dedup, bounds -------------------------------------------------------


def test_snapshot_decisions_on_one_subject_both_stay_unless_one_supersedes() -> None:
    snapshot = folded(
        ev(EventKind.DECISION, "use Redis for the cache", key="topic:cache"),
        ev(EventKind.DECISION, "use FastAPI for the API", key="topic:api"),
        ev(EventKind.DECISION, "keep cache entries for ten minutes", key="topic:cache"),
    )
    assert len(snapshot.decisions) == 3  # the same subject is no evidence
    reversal = ev(
        EventKind.DECISION,
        "Actually, let's not use a token bucket after all: use a sliding window log",
        key="topic:rate limiting",
    )
    bucket = ev(EventKind.DECISION, "Rate limiting: we'll use a token bucket with a burst of 20")
    snapshot = fold_snapshot(snapshot, [bucket, reversal])
    assert [d.text for d in snapshot.decisions][-1] == reversal.summary
    assert not any("burst of 20" in d.text for d in snapshot.decisions)


def test_snapshot_a_rejection_captured_apart_still_supersedes() -> None:
    snapshot = fold_snapshot(
        Snapshot(), [ev(EventKind.DECISION, "Use a token bucket for rate limiting")]
    )
    merged = ev(EventKind.DECISION, "Use a fixed window instead", keywords=("not:token bucket",))
    assert [d.text for d in fold_snapshot(snapshot, [merged]).decisions] == [merged.summary]


def test_snapshot_the_models_decisions_rank_below_the_users() -> None:
    user = [ev(EventKind.DECISION, f"use tool{i} for job{i}", speaker="user") for i in range(9)]
    model = ev(EventKind.DECISION, "I'll use orjson for serialization", speaker="assistant")
    snapshot = fold_snapshot(Snapshot(), [*user[:5], model, *user[5:]])
    assert len(snapshot.decisions) == 10
    extra = ev(EventKind.DECISION, "use Postgres for storage", speaker="user")
    full = fold_snapshot(snapshot, [extra])
    assert all(d.speaker == "user" for d in full.decisions)  # the model's went first
    assert full.decisions[0].text == "use tool0 for job0"
    restated = ev(EventKind.DECISION, "use tool3 for job3", speaker="assistant")
    assert full.is_duplicate(restated)
    assert fold_snapshot(full, [restated]).decisions == full.decisions


def test_snapshot_an_assistant_decision_without_evidence_keeps_the_users() -> None:
    user = ev(EventKind.DECISION, "use Redis for the cache", speaker="user")
    model = ev(EventKind.DECISION, "I'll use Memcached for the cache", speaker="assistant")
    snapshot = fold_snapshot(Snapshot(), [user, model])
    assert [d.speaker for d in snapshot.decisions] == ["user", "assistant"]
    # the user's own replacement needs no cue word
    again = ev(EventKind.DECISION, "The caching layer is Memcached, for the cache", speaker="user")
    assert [d.text for d in fold_snapshot(Snapshot(), [user, again]).decisions] == [again.summary]


def test_snapshot_a_replacement_in_other_words_leaves_one_decision_and_others_stay() -> None:
    """Where no form of the rules speaks, the pair model's verdict is what the fold applies."""
    decisions = [
        ev(EventKind.DECISION, "The arm's joint controllers run at 500 Hz.", speaker="user"),
        ev(EventKind.DECISION, "Cache product pages in Varnish.", speaker="user"),
        ev(EventKind.DECISION, "Daily quests refresh every 24 hours.", speaker="user"),
    ]
    snapshot = fold_snapshot(Snapshot(), decisions)
    others = [
        ev(EventKind.DECISION, "Seller analytics get cached in Redis for an hour.", speaker="user"),
        ev(EventKind.DECISION, "Shop offers rotate every 8 hours.", speaker="user"),
    ]
    snapshot = fold_snapshot(snapshot, others)
    assert len(snapshot.decisions) == 5  # decisions about other things all stay
    faster = ev(EventKind.DECISION, "Joint control loop on the arm: 1 kHz.", speaker="user")
    texts = [d.text for d in fold_snapshot(snapshot, [faster]).decisions]
    assert "The arm's joint controllers run at 500 Hz." not in texts
    assert texts[-1] == faster.summary and len(texts) == 5
    # the model's own decision may only be proposing: against the user's it needs a cue
    proposed = ev(EventKind.DECISION, "Joint control loop on the arm: 1 kHz.", speaker="assistant")
    assert len(fold_snapshot(snapshot, [proposed]).decisions) == 6


def test_snapshot_errors_age_out_one_offs_first_and_a_repeat_starts_over() -> None:
    lasting = ev(EventKind.ERROR, "mypy: bad type", key="cmd:mypy|bad type")
    one_off = ev(EventKind.ERROR, "pyest: not found", key="cmd:pyest|x", keywords=(TRANSIENT,))
    snapshot = fold_snapshot(Snapshot(), [lasting, one_off])
    reads = [
        ev(EventKind.FILE_READ, f"read f{i}", key=f"f{i}")
        for i in range(TRANSIENT_ERROR_AGE_EVENTS)
    ]
    snapshot = fold_snapshot(snapshot, reads)
    assert [e.key for e in snapshot.errors] == ["cmd:mypy|bad type"]
    assert not snapshot.is_duplicate(lasting)  # seen again is news: its age starts over
    more = [
        ev(EventKind.FILE_READ, f"read g{i}", key=f"g{i}") for i in range(ERROR_AGE_EVENTS - 10)
    ]
    renewed = fold_snapshot(fold_snapshot(snapshot, [lasting]), more)
    assert [e.key for e in renewed.errors] == ["cmd:mypy|bad type"]
    assert fold_snapshot(snapshot, more).errors == []


def test_snapshot_a_fix_resolves_every_error_of_its_command() -> None:
    snapshot = folded(
        ev(EventKind.ERROR, "pytest: test_a", key="cmd:pytest|failed test_a"),
        ev(EventKind.ERROR, "pytest: test_b", key="cmd:pytest|failed test_b"),
        ev(EventKind.ERROR, "pytest-cov: x", key="cmd:pytest-cov|x"),
    )
    fixed = fold_snapshot(snapshot, [ev(EventKind.ERROR_RESOLVED, "ok", key="cmd:pytest")])
    assert [e.key for e in fixed.errors] == ["cmd:pytest-cov|x"]


def test_snapshot_an_edited_file_read_again_stays_edited() -> None:
    snapshot = folded(
        ev(EventKind.FILE_EDIT, "edited a.py", key="a.py"),
        ev(EventKind.FILE_READ, "read a.py", key="a.py"),
    )
    assert [f.text for f in snapshot.files] == ["a.py (edited)"]
    assert not is_read_only(snapshot.files[0])


def test_snapshot_reversal_matches_whole_words_only() -> None:
    snapshot = folded(
        ev(EventKind.DECISION, "use go for the CLI", key="topic:cli"),
        ev(EventKind.DECISION, "use MongoDB for storage", key="topic:storage"),
        ev(EventKind.DECISION, "use Rust for the CLI", keywords=("not:go",), key="topic:cli"),
    )
    assert [d.text for d in snapshot.decisions] == [
        "use MongoDB for storage",
        "use Rust for the CLI",
    ]


def test_snapshot_reversal_also_cleans_the_compaction_summary() -> None:
    snapshot = folded(
        ev(EventKind.COMPACTION_SUMMARY, "s", body="We chose SQLite. Tests pass."),
        ev(EventKind.DECISION, "use Redis", keywords=("not:sqlite",)),
    )
    assert snapshot.compaction_summary == "Tests pass."


def test_snapshot_a_successful_change_of_a_file_resolves_its_error() -> None:
    snapshot = folded(
        ev(EventKind.ERROR, "edit a.py: no match", key="file:a.py"),
        ev(EventKind.ERROR, "pytest: 1 failed", key="cmd:pytest"),
        ev(EventKind.FILE_READ, "read a.py", key="a.py"),
    )
    assert len(snapshot.errors) == 2  # reading does not fix anything
    snapshot = fold_snapshot(snapshot, [ev(EventKind.FILE_EDIT, "edited a.py", key="a.py")])
    assert [e.key for e in snapshot.errors] == ["cmd:pytest"]


def test_snapshot_subagents_move_from_open_to_finished() -> None:
    snapshot = folded(
        ev(EventKind.SUBAGENT_START, "subagent explore", key="ses_c"),
        ev(EventKind.SUBAGENT_START, "subagent review", key="ses_d"),
        ev(EventKind.SUBAGENT_FINISH, "ses_c finished", key="ses_c"),
    )
    assert [s.key for s in snapshot.subagents_open] == ["ses_d"]
    assert [s.text for s in snapshot.subagents_done] == ["subagent explore (done)"]


def test_snapshot_environment_and_git_keep_the_latest_per_key() -> None:
    snapshot = folded(
        ev(EventKind.CWD_CHANGE, "cd /repo", key="cwd"),
        ev(EventKind.GIT, "branch main", key="branch"),
        ev(EventKind.CWD_CHANGE, "cd /repo/pkg", key="cwd"),
        ev(EventKind.GIT, "branch feature/x", key="branch"),
    )
    assert [e.text for e in snapshot.environment] == ["cd /repo/pkg"]
    assert [g.text for g in snapshot.git] == ["branch feature/x"]


def test_snapshot_prompts_intents_and_messages_keep_the_latest_text() -> None:
    snapshot = folded(
        ev(EventKind.PROMPT, "first"),
        ev(EventKind.PROMPT, "second ask", body="second ask in full"),
        ev(EventKind.INTENT, "/review"),
        ev(EventKind.MESSAGE, "done", body="I did it"),
        ev(EventKind.COMPACTION_SUMMARY, "compaction summary"),
    )
    assert snapshot.last_request == "second ask in full"
    assert snapshot.intent == "/review"
    assert snapshot.compaction_summary == "I did it"  # the assistant's text is the summary


def test_snapshot_a_stated_completion_closes_the_task_it_names() -> None:
    tasks = [
        ev(EventKind.TASK_CREATE, "TODO: add rate limiting to the API", key="todo add rate"),
        ev(EventKind.TASK_CREATE, "TODO: fix the build warnings", key="todo fix build"),
        ev(EventKind.TASK_CREATE, "remember to bump the version", key="remember bump"),
    ]
    snapshot = fold_snapshot(Snapshot(), tasks)
    passing = ev(EventKind.TASK_COMPLETE, "The build is done.", key="done:the build is done")
    assert snapshot.is_duplicate(passing)  # one shared word of three closes nothing
    assert len(fold_snapshot(snapshot, [passing]).tasks) == 3
    done = ev(EventKind.TASK_COMPLETE, "Rate limiting is done.", key="done:rate limiting")
    assert not snapshot.is_duplicate(done)
    snapshot = fold_snapshot(snapshot, [done])
    assert [t.key for t in snapshot.tasks] == ["todo fix build", "remember bump"]
    bumped = ev(EventKind.TASK_COMPLETE, "Finished: bump version", key="done:finished bump")
    assert [t.key for t in fold_snapshot(snapshot, [bumped]).tasks] == ["todo fix build"]


def test_snapshot_a_prompts_todo_and_the_same_todo_item_are_one_task() -> None:
    said = ev(EventKind.TASK_CREATE, "add rate limiting to the export API", key="task:add rate")
    listed = ev(
        EventKind.TASK_UPDATE, "Add rate limiting to the export API [pending]", key="todo:1"
    )
    other = ev(EventKind.TASK_UPDATE, "Add rate limiting to the import API [pending]", key="todo:2")
    snapshot = folded(said, listed, other)
    assert [t.key for t in snapshot.tasks] == ["todo:1", "todo:2"]
    done = ev(
        EventKind.TASK_COMPLETE, "Add rate limiting to the export API [completed]", key="todo:1"
    )
    assert [t.key for t in fold_snapshot(snapshot, [done]).tasks] == ["todo:2"]
    again = folded(listed, said)  # the prompt's after the list's: still one, and the list closes it
    assert [t.key for t in again.tasks] == ["task:add rate"]
    assert fold_snapshot(again, [done]).tasks == []


def test_snapshot_duplicates_of_fixes_completions_and_searches() -> None:
    snapshot = folded(
        ev(EventKind.ERROR, "pytest: failed", key="cmd:pytest"),
        ev(EventKind.TASK_UPDATE, "write docs [pending]", key="todo:1"),
        ev(EventKind.FILE_SEARCH, "grep TODO"),
    )
    assert not snapshot.is_duplicate(ev(EventKind.ERROR_RESOLVED, "ok", key="cmd:pytest"))
    assert snapshot.is_duplicate(ev(EventKind.ERROR_RESOLVED, "ls ok", key="cmd:ls"))
    assert not snapshot.is_duplicate(ev(EventKind.TASK_COMPLETE, "docs [completed]", key="todo:1"))
    assert snapshot.is_duplicate(ev(EventKind.TASK_COMPLETE, "x [completed]", key="todo:9"))
    assert snapshot.is_duplicate(ev(EventKind.FILE_SEARCH, "grep TODO"))
    assert not snapshot.is_duplicate(ev(EventKind.FILE_SEARCH, "grep FIXME"))
    assert snapshot.is_duplicate(ev(EventKind.PROMPT, "x")) is False


def test_snapshot_a_file_read_again_after_others_is_not_a_duplicate() -> None:
    snapshot = folded(
        ev(EventKind.FILE_READ, "read a.py", key="a.py"),
        ev(EventKind.FILE_READ, "read b", key="b"),
    )
    again = ev(EventKind.FILE_READ, "read a.py", key="a.py")
    assert not snapshot.is_duplicate(again)
    assert snapshot.is_duplicate(ev(EventKind.FILE_READ, "read b", key="b"))


def test_snapshot_drop_duplicates_judges_a_batch_in_order() -> None:
    error = ev(EventKind.ERROR, "pytest: failed", key="cmd:pytest")
    fixed = ev(EventKind.ERROR_RESOLVED, "pytest succeeded", key="cmd:pytest")
    rule = ev(EventKind.RULE, "always run ruff")
    fresh = drop_duplicates(Snapshot(), [rule, error, rule, fixed, fixed])
    assert [e.kind for e in fresh] == [EventKind.RULE, EventKind.ERROR, EventKind.ERROR_RESOLVED]
    assert fold_snapshot(Snapshot(), fresh).errors == []


def test_snapshot_fingerprints_are_bounded() -> None:
    events = [ev(EventKind.FILE_SEARCH, f"grep pattern{i}") for i in range(500)]
    snapshot = fold_snapshot(Snapshot(), events)
    assert len(snapshot.fingerprints) == FINGERPRINTS_MAX
    assert snapshot.is_duplicate(events[-1]) and not snapshot.is_duplicate(events[0])


def test_snapshot_loaded_over_its_caps_is_trimmed() -> None:
    raw = Snapshot().model_dump()
    raw["rules"] = [{"key": str(i), "text": f"rule {i}"} for i in range(100)]
    raw["last_request"] = "x" * 100_000
    loaded = Snapshot.model_validate(raw)
    assert len(loaded.rules) == CAPS["rules"] and loaded.rules[-1].text == "rule 99"
    assert len(loaded.last_request.encode()) <= 600


def test_snapshot_reducer_accepts_none_and_tuples() -> None:
    rule = ev(EventKind.RULE, "always run ruff")
    assert fold_snapshot(None, (rule,)).rules[0].text == "always run ruff"
    assert fold_snapshot(None, None) == Snapshot()


def test_snapshot_ten_thousand_events_stay_within_a_fixed_size() -> None:
    kinds = list(EventKind)
    snapshot = Snapshot()
    for i in range(10_000):
        kind = kinds[i % len(kinds)]
        event = ev(kind, f"{kind.value} {i} " + "y" * 300, key=f"k{i}", body="b" * 5000)
        snapshot = fold_snapshot(snapshot, [event])
    size = len(snapshot.model_dump_json())
    # every section at its cap with 200-char items, plus the capped free texts and fingerprints
    ceiling = sum(CAPS.values()) * (200 + 60 + 40) + 600 + 3 * 1200 + FINGERPRINTS_MAX * 20 + 2000
    assert size <= ceiling


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(list(EventKind)), st.text(max_size=40), st.integers(0, 5)),
        max_size=60,
    )
)
def test_snapshot_folding_one_by_one_equals_folding_a_batch(steps) -> None:
    events = [ev(kind, text or "x", key=f"k{n}") for kind, text, n in steps]
    batched = fold_snapshot(Snapshot(), events)
    stepwise = Snapshot()
    for event in events:
        stepwise = fold_snapshot(stepwise, [event])
    assert stepwise == batched
    assert Snapshot.model_validate_json(batched.model_dump_json()) == batched
    for section, cap in CAPS.items():
        assert len(getattr(batched, section)) <= cap


def test_snapshot_a_reversed_rule_replaces_the_old_one() -> None:
    from plait.nodes.capture import capture
    from plait.state.intents import SessionRef, UserTurn

    session = SessionRef(session_id="s", root_session_id="s")
    turns = [
        UserTurn(text=t) for t in ("Always use tabs.", "Never commit to main.", "Never use tabs.")
    ]
    snapshot = fold_snapshot(Snapshot(), capture(turns, session).events)
    assert [r.text for r in snapshot.rules] == ["Never commit to main", "Never use tabs"]


def test_event_lists_take_a_lone_string_as_one_item_and_drop_repeats() -> None:
    event = SessionEvent(
        root_session_id="s",
        session_id="s",
        kind=EventKind.FILE_EDIT,
        summary="edited src/a.py",
        refs="src/a.py",
        keywords=["pool", "pool", "timeout"],
    )
    assert event.refs == ("src/a.py",)
    assert event.keywords == ("pool", "timeout")
