"""Tool results → outcomes: status, the line that says what failed, its key, one-off failures."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.tool_outcome import (
    FileTouch,
    ToolOutcome,
    command_key,
    program_of,
    tool_outcome,
    touched_files,
)

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'yaml'\n"
)


def shell(command: str, output: str = "", exit_code: int | None = None) -> ToolOutcome:
    return tool_outcome("bash", args={"command": command}, output=output, exit_code=exit_code)


def test_tool_outcome_a_traceback_is_summarised_by_its_exception_line() -> None:
    outcome = shell('python3 -c "import yaml"', TRACEBACK, 1)
    assert outcome.status == "failed"
    assert outcome.summary == "ModuleNotFoundError: No module named 'yaml'"


def test_tool_outcome_a_chained_traceback_keeps_the_exception_that_ended_the_run() -> None:
    output = (
        "Traceback (most recent call last):\nKeyError: 'DATABASE_URL'\n\nDuring handling of the "
        "above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\napp.config.ConfigError: DATABASE_URL is not set\n'
    )
    assert shell("python -c 'main()'", output, 1).summary == (
        "app.config.ConfigError: DATABASE_URL is not set"
    )


def test_tool_outcome_unrelated_inline_python_failures_do_not_merge() -> None:
    first = shell('python3 -c "import yaml"', TRACEBACK, 1)
    second = shell(
        'python3 -c "print(x)"',
        "Traceback (most recent call last):\nNameError: name 'x' is not defined\n",
        1,
    )
    assert first.command_key != second.command_key
    assert first.signature != second.signature
    assert shell('python3 -c "import yaml"', TRACEBACK, 1).signature == first.signature


def test_tool_outcome_the_same_failing_test_rerun_has_the_same_signature() -> None:
    def run(seconds: str) -> ToolOutcome:
        output = (
            "FAILED tests/test_auth.py::test_login - assert 200 == 401\n"
            f"1 failed, 3 passed in {seconds}s\n"
        )
        return shell("uv run pytest -q", output, 1)

    first, again = run("0.42"), run("0.57")
    assert first.signature == again.signature
    assert first.summary.startswith("FAILED tests/test_auth.py::test_login")
    assert shell("pytest", "4 passed in 0.1s", 0).command_key == first.command_key == "pytest"


@pytest.mark.parametrize(
    ("command", "output", "summary"),
    [
        (
            "cargo build",
            "error[E0308]: mismatched types\n --> src/main.rs:4:18\nerror: could not compile `app`",
            "error[E0308]: mismatched types (src/main.rs:4:18)",
        ),
        (
            "npx tsc --noEmit",
            "src/a.ts(27,13): error TS2345: Argument of type 'string' is not assignable.",
            "src/a.ts(27,13): error TS2345: Argument of type 'string' is not assignable.",
        ),
        ("go build ./...", "# app\nmain.go:4:2: undefined: foo", "main.go:4:2: undefined: foo"),
        (
            "ruff check .",
            "a.py:1:8: F401 [*] `os` imported but unused\nb.py:2:1: E722 bare\nFound 2 errors.",
            "a.py:1:8: F401 [*] `os` imported but unused (+1 more)",
        ),
        ("mypy src", "a.py:3: error: Name 'x' is not defined  [name-defined]", None),
        (
            "npm run build",
            'npm ERR! Missing script: "build"\nnpm ERR!\n',
            'npm ERR! Missing script: "build"',
        ),
        ("go test ./...", "--- FAIL: TestParse (0.00s)\nFAIL\n", "FAILED TestParse"),
        (
            "npx jest",
            "  \u25cf date \u203a leap years\n\nTests: 1 failed",
            "FAILED date \u203a leap years",
        ),
        ("pytset -q", "bash: pytset: command not found", "bash: pytset: command not found"),
        ("make", "cc -c a.c\na.c:5:3: error: 'len' undeclared\nmake: *** [a.o] Error 1", None),
        (
            "mix test",
            "  1) test greets the world (HelloTest)\n     test/hello_test.exs:5\n1 test, 1 failure",
            "FAILED greets the world",
        ),
    ],
)
def test_tool_outcome_summary_is_the_meaningful_line(
    command: str, output: str, summary: str | None
) -> None:
    outcome = shell(command, output, 1)
    assert outcome.status == "failed"
    assert outcome.summary == (summary or output.splitlines()[-1 if "mypy" in command else 1])


def test_tool_outcome_text_is_judged_when_the_host_gives_no_verdict() -> None:
    langchain = tool_outcome("terminal", args={"command": "python a.py"}, output=TRACEBACK)
    assert langchain.status == "failed"
    assert shell("pytest -q", "20 passed in 1.3s").status == "ok"
    assert shell("make", "").status == "unknown"
    assert shell("python -m app", "Error handling middleware registered").status == "unknown"


def test_tool_outcome_the_host_verdict_wins_over_the_text() -> None:
    assert shell("python cleanup.py", TRACEBACK + "continuing\n", 0).status == "ok"
    assert shell("true", "all good", 2).status == "failed"
    edit = tool_outcome("edit", args={"filePath": "a.py"}, error="oldString not found")
    assert (edit.status, edit.summary, edit.command_key) == (
        "failed",
        "oldString not found",
        "file:a.py",
    )


def test_tool_outcome_grep_finding_nothing_is_not_a_failure() -> None:
    assert shell('grep -rn "TODO" src/', "", 1).status == "ok"
    assert shell("diff a b", "1c1\n< a\n---\n> b\n", 1).status == "ok"
    assert shell('grep -rn "error" src/', "src/log.py:1: logger.error('x')", 0).status == "ok"
    assert shell("cat app.log", "ERROR: db timeout").status == "ok"


@pytest.mark.parametrize(
    ("command", "output", "exit_code"),
    [
        ("pytset -q", "bash: pytset: command not found", 127),
        ('git comit -m "x"', "git: 'comit' is not a git command. See 'git --help'.", 1),
        ("npm run biuld", 'npm ERR! Missing script: "biuld"', 1),
        ("yarn install", "error An unexpected error occurred: ETIMEDOUT.", 1),
        ("curl -sf http://localhost:8000", "", 7),
        ("ls nope/", "ls: cannot access 'nope/': No such file or directory", 2),
    ],
)
def test_tool_outcome_one_off_mistakes_are_transient(
    command: str, output: str, exit_code: int
) -> None:
    assert shell(command, output, exit_code).transient


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ('python3 -c "import yaml"', TRACEBACK),
        ("uv run pytest", "FAILED tests/test_a.py::test_b - assert 1 == 2"),
        ("docker build .", "ERROR: Could not open requirements file: No such file or directory"),
        (
            "npx playwright test",
            "  1) [chromium] \u203a a.spec.ts:1:1 \u203a logs in\nError: Timed out 5000ms",
        ),
    ],
)
def test_tool_outcome_real_errors_are_not_transient(command: str, output: str) -> None:
    assert not shell(command, output, 1).transient


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("uv run pytest -q", "pytest"),
        ("uv run python -m pytest -q", "pytest"),
        ("FOO=1 BAR=2 npm test", "npm"),
        ("cd app && npm test", "npm"),
        ("source .venv/bin/activate && pytest | tail -5", "pytest"),
        ("sudo -E docker compose up", "docker"),
        ("timeout 5 curl -s http://x", "curl"),
        ("python3.12 script.py", "python"),
        ("./scripts/test.sh --fast", "test.sh"),
        ("sh scripts/deploy.sh", "deploy.sh"),
        ('bash -c "cd x && cargo test"', "cargo"),
        ("poetry run black .", "black"),
        ("npx tsc --noEmit", "tsc"),
        ("", "shell"),
        ("echo 'unbalanced", "echo"),
    ],
)
def test_program_of(command: str, program: str) -> None:
    assert program_of(command) == program


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("uv run pytest -q tests/test_a.py", "pytest"),
        ("npm run build", "npm run build"),
        ("npm test", "npm test"),
        ("cargo test --lib", "cargo test"),
        ("git push origin main", "git push"),
        ("python app.py --debug", "python app.py"),
        ('node -e "console.log(1)"', "node -e#"),
    ],
)
def test_command_key(command: str, key: str) -> None:
    assert command_key(command).startswith(key)


@pytest.mark.parametrize(
    ("tool", "args", "touched"),
    [
        ("edit", {"filePath": "src/a.py"}, [FileTouch(path="src/a.py", action="edit")]),
        ("read", {"filePath": "README.md"}, [FileTouch(path="README.md", action="read")]),
        ("write_file", {"file_path": "d.md"}, [FileTouch(path="d.md", action="write")]),
        (
            "str_replace_editor",
            {"command": "view", "path": "/r/a.py"},
            [FileTouch(path="/r/a.py", action="read")],
        ),
        (
            "patch",
            {"patchText": "*** Update File: a.py\n@@\n*** Add File: b.py\n*** Delete File: c.py"},
            [
                FileTouch(path="a.py", action="edit"),
                FileTouch(path="b.py", action="write"),
                FileTouch(path="c.py", action="delete"),
            ],
        ),
        (
            "apply_patch",
            {"input": "--- a/x.js\n+++ b/x.js\n"},
            [FileTouch(path="x.js", action="edit")],
        ),
        (
            "bash",
            {"command": "sed -i 's/a/b/' src/c.py"},
            [FileTouch(path="src/c.py", action="edit")],
        ),
        (
            "bash",
            {"command": "mv a.py b/a.py && rm -f x.json"},
            [
                FileTouch(path="a.py", action="write"),
                FileTouch(path="b/a.py", action="write"),
                FileTouch(path="x.json", action="delete"),
            ],
        ),
        ("bash", {"command": 'echo "A=1" >> .env'}, [FileTouch(path=".env", action="write")]),
        ("bash", {"command": "cp a.toml b.toml"}, [FileTouch(path="b.toml", action="write")]),
        ("bash", {"command": "black ."}, []),
        ("bash", {"command": "git diff"}, []),
        ("bash", {"command": "pytest tests/test_a.py"}, []),
        ("grep", {"pattern": "def main"}, []),
    ],
)
def test_touched_files(tool: str, args: dict[str, str], touched: list[FileTouch]) -> None:
    assert list(touched_files(tool, args)) == touched


def test_tool_outcome_hostile_output_costs_bounded_time_and_never_raises() -> None:
    garbage = random.Random(1).randbytes(3_000_000)
    huge = TRACEBACK * 400_000
    ansi = "\x1b[31merror\x1b[0m: boom\r" * 200_000
    started = time.perf_counter()
    blank = ("\n" * 5_000_000, " \n" * 2_000_000, "\t\r\n" * 2_000_000)
    for output in (garbage, huge, ansi, *blank, "x" * 10_000_000, "ok " * 3_000_000):
        outcome = tool_outcome("bash", args={"command": "x"}, output=output)
        assert len(outcome.summary) <= 200
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    ("tool", "args", "output", "exit_code", "error"),
    [
        (None, None, None, None, None),
        ("bash", {"command": 42}, b"\xff\xfe", "1", {"message": "boom"}),
        ("bash", {"command": "x"}, "out", True, ["not", "a", "string"]),
        ("edit", {"filePath": ""}, object(), 3.7, ""),
    ],
)
def test_tool_outcome_odd_input_never_raises(tool, args, output, exit_code, error) -> None:
    assert tool_outcome(tool, args=args, output=output, exit_code=exit_code, error=error).status


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=2000), st.one_of(st.none(), st.integers()))
def test_tool_outcome_any_text_gives_a_consistent_outcome(
    command: str, output: str, exit_code: int | None
) -> None:
    outcome = shell(command, output, exit_code)
    assert (outcome.status == "failed") == bool(outcome.signature)
    assert outcome.signature.startswith(outcome.command_key) or not outcome.signature
    touched_files("bash", {"command": command})


def test_tool_outcome_an_unknown_make_target_is_a_one_off() -> None:
    outcome = tool_outcome(
        "bash",
        args={"command": "make deploy"},
        output="make: *** No rule to make target 'deploy'.  Stop.\n",
        exit_code=2,
    )
    assert outcome.status == "failed" and outcome.transient
