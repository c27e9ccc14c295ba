"""The pure rules behind observations: topic keys, search, checks, summaries, seeds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plait.nodes.observations import (
    ObservationIndex,
    files_in,
    session_topic_key,
    suggest_topic_key,
    terms,
)
from plait.nodes.seeding import ci_commands, compose_services, make_targets, readme_brief
from plait.nodes.session_summary import project_events, request_phrase, summarize_events
from plait.state.base.errors import UsageError
from plait.state.events import EventKind, SessionEvent
from plait.state.observations import (
    Observation,
    check_files,
    check_topic_key,
    check_type,
    parse_observation_line,
)

START = datetime(2026, 3, 1, tzinfo=UTC)


def observation(number: int, title: str, content: str, **fields: object) -> Observation:
    when = START + timedelta(minutes=number)
    return Observation(
        id=f"o{number:012x}",
        type=fields.pop("type", "learning"),  # type: ignore[arg-type]
        title=title,
        content=content,
        created_at=when,
        updated_at=when,
        **fields,  # type: ignore[arg-type]
    )


def test_suggested_topic_keys_are_deterministic_and_family_prefixed() -> None:
    assert suggest_topic_key("Use the Auth Model for the API!", "architecture") == (
        "architecture/auth-model-api"
    )
    assert (
        suggest_topic_key("Fix: N+1 queries in /orders", "bugfix") == "bug/fix-n-1-queries-orders"
    )
    assert suggest_topic_key("...", "decision") == "decision/untitled"
    key = suggest_topic_key("a " * 300 + "long title", "pattern")
    assert key == check_topic_key(key) and len(key) <= 120
    assert session_topic_key("ses_ABC123") == "session/ses-abc123"


def test_topic_keys_with_odd_characters_are_refused() -> None:
    assert check_topic_key("  Architecture/Auth-Model ") == "architecture/auth-model"
    for bad in ("auth model", "a//b", "trailing/", "ünïcode", "x" * 121, "-lead", "semi;colon"):
        with pytest.raises(UsageError, match="topic_key"):
            check_topic_key(bad)


def test_types_and_files_are_checked() -> None:
    assert check_type("Session-Summary") == "session_summary"
    with pytest.raises(UsageError, match="type: 'mood'"):
        check_type("mood")
    assert check_files("a.py") == ("a.py",)
    assert check_files(["a.py", "a.py", " b.py "]) == ("a.py", "b.py")
    with pytest.raises(UsageError, match="files"):
        check_files([1])


def test_search_ranks_titles_first_stems_and_matches_prefixes() -> None:
    index = ObservationIndex.build(
        [
            observation(1, "Caching layer", "What: Redis in front of the catalog"),
            observation(2, "Catalog import", "What: nightly job; caches are warmed after it"),
            observation(3, "Old cache", "What: memcached", superseded_by="o000000000001"),
        ]
    )
    ranked = [o.title for o, _ in index.search("cached", limit=5)]
    assert ranked == ["Caching layer", "Catalog import"]
    assert [o.title for o, _ in index.search("catal", limit=5)][:2] == [
        "Catalog import",
        "Caching layer",
    ]
    assert [o.title for o, _ in index.search("memcached", limit=5)] == []
    assert [o.title for o, _ in index.search("memcached", limit=5, include_superseded=True)] == [
        "Old cache"
    ]
    assert [o.id for o, _ in index.search("o000000000002", limit=5)] == ["o000000000002"]
    assert terms("The caches were warmed") == ["cach", "warm"]


def test_where_lines_name_the_files() -> None:
    content = (
        "What: x\nWhere: src/app.py, `tests/test_app.py` and Makefile; docs/\n**Where**: setup.cfg"
    )
    assert files_in(content) == ("src/app.py", "tests/test_app.py", "docs/", "setup.cfg")


def event(kind: EventKind, summary: str, **fields: object) -> SessionEvent:
    return SessionEvent(root_session_id="r", session_id="r", kind=kind, summary=summary, **fields)  # type: ignore[arg-type]


def test_a_session_summary_is_folded_from_its_events() -> None:
    events = [
        event(EventKind.PROMPT, "Add CSV export"),
        event(EventKind.RULE, "Never touch the billing tables"),
        event(EventKind.TASK_CREATE, "write the exporter", key="t1"),
        event(EventKind.TASK_CREATE, "document the flag", key="t2"),
        event(EventKind.FILE_READ, "read api.py", refs=("api.py",)),
        event(EventKind.FILE_EDIT, "edit export.py", refs=("export.py",)),
        event(EventKind.ERROR, "pytest failed", key="cmd:pytest"),
        event(EventKind.ERROR, "ruff failed", key="cmd:ruff"),
        event(EventKind.ERROR_RESOLVED, "pytest passes", key="cmd:pytest"),
        event(EventKind.TASK_COMPLETE, "exporter written", key="t1"),
        event(EventKind.DISCOVERY, "the csv module quotes by default"),
        event(EventKind.PROMPT, "Also add a header row"),
    ]
    summary = summarize_events(events, "r")
    assert summary.title == "Session summary: Add CSV export"
    assert summary.content == (
        "## Goal\n- Add CSV export\n- Latest request: Also add a header row\n\n"
        "## Instructions\n- Never touch the billing tables\n\n"
        "## Discoveries\n- the csv module quotes by default\n\n"
        "## Accomplished\n- pytest passes\n- exporter written\n\n"
        "## Next Steps\n- document the flag\n- Unresolved: ruff failed\n\n"
        "## Relevant Files\n- export.py\n- api.py"
    )


def test_the_projects_summary_of_a_session_leaves_its_preferences_out() -> None:
    events = [
        event(EventKind.PROMPT, "I prefer tabs over spaces. Add CSV export.", speaker="user"),
        event(EventKind.PREFERENCE, "I prefer tabs over spaces"),
        event(EventKind.RULE, "Never touch the billing tables"),
    ]
    summary = summarize_events(project_events(events), "r")
    assert summary.content == (
        "## Goal\n- Add CSV export.\n\n## Instructions\n- Never touch the billing tables"
    )


def test_the_summary_leaves_out_a_preference_only_the_drain_found() -> None:
    # "Tabs suit me better" is no preference to the rules; the drain's classifier recorded one
    prompt = "Add CSV export. Tabs suit me better."
    events = [
        event(EventKind.PROMPT, prompt, speaker="user"),
        event(EventKind.PREFERENCE, "Tabs suit me better"),
    ]
    assert summarize_events(project_events(events[:1]), "r").content == f"## Goal\n- {prompt}"
    summary = summarize_events(project_events(events), "r")
    assert summary.content == "## Goal\n- Add CSV export."


def test_a_summary_title_says_the_request_not_the_chatter_around_it() -> None:
    prompts = {
        "hey, can you please fix the failing tests in export.py? thanks!": (
            "Fix the failing tests in export.py"
        ),
        "ok so I want you to add a --csv flag. It should quote fields.": "Add a --csv flag",
        "Hi!\nPlease look at why CI fails on main": "Look at why CI fails on main",
        "thanks, now rename api.py to routes.py please": "Rename api.py to routes.py",
        "Add CSV export": "Add CSV export",
        "fix it": "Fix it",
    }
    assert {prompt: request_phrase(prompt) for prompt in prompts} == prompts
    events = [
        SessionEvent(
            root_session_id="r",
            session_id="r",
            kind=EventKind.PROMPT,
            summary="hey can you add a --csv flag to the exporter? thanks",
        )
    ]
    assert (
        summarize_events(events, "r").title == "Session summary: Add a --csv flag to the exporter"
    )


def test_seeds_read_makefiles_ci_compose_and_readmes() -> None:
    assert make_targets("all: build\n\t@echo hi\n.PHONY: all\nx := 1\ntest:\n\tpytest\n") == {
        "all": "echo hi",
        "test": "pytest",
    }
    gitlab = "test:\n  script:\n    - make check\n    - make test\nlint:\n  script:\n    - ruff .\n"
    assert ci_commands(gitlab) == ["make check", "make test", "ruff ."]
    compose = "version: '3'\nservices:\n  web:\n    build: .\n  cache:\n    image: redis:7\nvolumes:\n  x:\n"
    assert compose_services(compose) == ["web", "cache (redis:7)"]
    assert readme_brief("<p>logo</p>\n\n# Tool\n\n> note\n\nDoes things.\nWell.\n\n## More") == (
        "Tool",
        "Does things. Well.",
    )


def test_a_broken_export_line_is_named() -> None:
    with pytest.raises(UsageError, match="line 7: not JSON"):
        parse_observation_line("{", 7)
    with pytest.raises(UsageError, match="line 2: type"):
        parse_observation_line(
            '{"id": "o000000000001", "type": "x", "title": "t", "content": "c"}', 2
        )
    with pytest.raises(UsageError, match="line 3: id"):
        parse_observation_line('{"id": "1", "type": "decision", "title": "t", "content": "c"}', 3)


def test_an_imported_line_is_held_to_the_same_limits() -> None:
    line = '{"id": "o000000000001", "type": "decision", "title": "t", "content": "%s"}'
    with pytest.raises(UsageError, match="line 4: content: 40000 bytes"):
        parse_observation_line(line % ("x" * 40_000), 4)
    odd = '{"id": "o000000000001", "type": "decision", "title": "t", "content": "c", "topic_key": "A B"}'
    with pytest.raises(UsageError, match="line 5: topic_key"):
        parse_observation_line(odd, 5)
