"""``plait import-history``: OpenCode's past sessions of a project, from OpenCode's database.

The database is laid out as OpenCode 1.18.33 keeps it (``session``, ``message``, ``part``; the
columns read here are the ones that version writes). The import goes through the real CLI into a
real hot tier, and is then read back as the memory a new session would get.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from support.plait_cli import run_plait

SECRET = "sk-proj-" + "Q7x9" * 10

SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
  slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""


def opencode_database(path: Path, project: Path, elsewhere: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    clock = iter(range(1_000, 100_000, 10))

    def session(sid: str, directory: Path, parent: str | None = None) -> None:
        t = next(clock)
        db.execute(
            "INSERT INTO session VALUES (?, 'global', ?, 'slug', ?, 'title', '1.18.33', ?, ?)",
            (sid, parent, str(directory), t, t),
        )

    def message(mid: str, sid: str, role: str, parts: list[object], **extra: object) -> None:
        t = next(clock)
        data = json.dumps({"role": role, **extra})
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, data))
        for n, part in enumerate(parts):
            body = part if isinstance(part, str) else json.dumps(part)
            pt = next(clock)
            db.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (f"prt_{mid}_{n}", mid, sid, pt, pt, body),
            )

    session("ses_a", project)
    message(
        "m1",
        "ses_a",
        "user",
        [{"type": "text", "text": "We decided to use PostgreSQL for storage."}],
    )
    message(
        "m2",
        "ses_a",
        "assistant",
        [{"type": "step-start"}, {"type": "text", "text": "OK.", "time": {"end": 5}}],
    )
    message("m3", "ses_a", "user", [{"type": "text", "text": f"Rule: never log the key {SECRET}."}])
    failing = {
        "type": "tool",
        "tool": "bash",
        "callID": "c1",
        "state": {
            "status": "completed",
            "input": {"command": "pytest -q"},
            "output": "FAILED tests/test_api.py::test_login - AssertionError: 401 != 200",
            "metadata": {"exit": 1},
        },
    }
    message("m4", "ses_a", "assistant", [failing, "{not json"])
    message("m5", "ses_a", "user", [{"type": "compaction", "auto": True}])
    message(
        "m6",
        "ses_a",
        "assistant",
        [{"type": "text", "text": "Summary: storage is PostgreSQL."}],
        summary=True,
    )
    message(
        "m7",
        "ses_a",
        "user",
        [{"type": "text", "synthetic": True, "text": "Continue if you have next steps"}],
    )
    session("ses_b", project / "sub", parent="ses_a")
    message("m8", "ses_b", "user", [{"type": "text", "text": "Let's use httpx for the client."}])
    session("ses_other", elsewhere)
    message("m9", "ses_other", "user", [{"type": "text", "text": "We decided to use MongoDB."}])
    db.commit()
    db.close()
    return path


def test_past_sessions_are_imported_once_and_remembered(
    tmp_path: Path, env: dict[str, str]
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    db = opencode_database(tmp_path / "opencode.db", project, elsewhere)
    args = ("import-history", "--project", str(project), "--source", str(db), "--json")

    first = run_plait(env, *args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["sessions"] == 2 and report["events_added"] > 0
    assert [s["where"] for s in report["skipped"]] == ["opencode.db: part prt_m4_1"]

    again = run_plait(env, *args)
    assert json.loads(again.stdout)["events_added"] == 0, "a second import added events"

    recalled = run_plait(
        env, "recall", "which database do we use for storage", "--project", str(project)
    )
    assert recalled.returncode == 0, recalled.stderr
    assert "PostgreSQL" in recalled.stdout and "MongoDB" not in recalled.stdout
    exported = run_plait(env, "recall", "never log the key", "--project", str(project))
    assert SECRET not in exported.stdout and SECRET not in first.stdout


def test_a_missing_database_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    missing = tmp_path / "nope.db"
    answer = run_plait(env, "import-history", "--project", str(tmp_path), "--source", str(missing))
    assert answer.returncode == 2 and "no OpenCode database" in answer.stderr
