"""Tool results → outcomes: did it fail, what is the line that says why, and what is its key.

Pure functions, no I/O. The host's own verdict wins (an error field, an exit code); when it gives
none (a LangChain ``ToolMessage`` with ``status="success"`` whose text is a traceback), the text
is judged: tracebacks, compiler and linter ``error`` lines, failing test ids, ``command not
found``, ``npm ERR!``… A result with no verdict and no evidence is ``unknown``, which must neither
raise nor resolve an error.

The ``signature`` keys an error by the command's identity *and* the error itself, so two unrelated
``python3 -c`` failures stay apart while the same failing test re-run lands on the same key;
``command_key`` is the identity alone, for a later success of that command to resolve it.
"""

from __future__ import annotations

import re
import shlex
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal


def word_set(words: str) -> frozenset[str]:
    """The words of a space-separated list, as a set (long word lists stay readable)."""
    return frozenset(words.split())


Status = Literal["ok", "failed", "unknown"]
FileAction = Literal["read", "write", "edit", "delete"]

HEAD_CHARS = 16_384
TAIL_CHARS = 32_768
COMMAND_MAX = 2_000
SUMMARY_MAX = 200
SIGNATURE_MAX = 160
LINES_MAX = 2_000
HEAD_LINES = 400
LINE_CHARS = 1_000
FILES_MAX = 32

SHELL_TOOLS = word_set(
    "bash shell sh zsh terminal execute exec run_command shell_command "
    "run_shell_command cmd powershell command run_terminal_cmd"
)
READ_TOOLS = word_set("read view read_file view_file cat open_file")
WRITE_TOOLS = word_set("write write_file create_file create save_file")
EDIT_TOOLS = word_set(
    "edit multiedit edit_file str_replace str_replace_editor "
    "str_replace_based_edit_tool replace_in_file insert"
)
PATCH_TOOLS = word_set("patch apply_patch apply_diff")
PATH_KEYS = ("filePath", "file_path", "path", "file", "filename", "target_file")
PATCH_KEYS = ("patchText", "patch", "input", "diff", "content")
# Programs that answer "no" with exit code 1 without failing: grep found nothing, diff differs.
NEGATIVE_ANSWER = word_set("grep egrep fgrep rg ag ack diff cmp test [ git-diff")
# Programs whose output is content, not a report: an "ERROR" line in a log is not a failure.
READERS = word_set("cat head tail less more grep egrep rg ag find ls tree wc sort uniq jq")
WRAPPERS = word_set("sudo env time nice nohup exec command stdbuf doas caffeinate")
RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("bundle", "exec"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
}
ONE_WORD_RUNNERS = word_set("npx bunx uvx pipx")
SETUP_PROGRAMS = word_set("cd pushd popd export source . set unset true : alias")
SUBCOMMAND_PROGRAMS = word_set(
    "npm pnpm yarn bun cargo go git docker kubectl terraform dotnet "
    "gradle gradlew mvn make just helm uv poetry pip deno swift"
)
SCRIPT_HOSTS = word_set("python node deno ruby perl bash sh zsh php")

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-_]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
BOX = re.compile(r"^[\s\u2502\u2577\u2575\u250c\u2514|>]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolOutcome:
    """What one tool call came to.

    Attributes:
        status: ``ok`` or ``failed`` by the host's verdict or the text's evidence; ``unknown``
            when there is neither.
        summary: For a failure, the line that says what failed; "" otherwise.
        signature: For a failure, ``command_key|error signature``; "" otherwise.
        command_key: The command's identity (``pytest``, ``npm run build``, ``python -c#1a2b3c4d``)
            or ``tool:<name>`` / ``file:<path>``; a later success with this key resolves it.
        program: The program a shell command runs (``uv run pytest -q`` → ``pytest``), or "".
        transient: The failure looks one-off (unknown command, typo, network blip): age it.
    """

    status: Status
    summary: str = ""
    signature: str = ""
    command_key: str = ""
    program: str = ""
    transient: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class FileTouch:
    """A file a tool call read, wrote, edited or deleted."""

    path: str
    action: FileAction


# -- text ---------------------------------------------------------------------------------------
def as_text(value: Any) -> str:
    """Tool output as bounded text: head and tail kept, colours and control bytes dropped."""
    if isinstance(value, bytes | bytearray):
        value = bytes(value[: (HEAD_CHARS + TAIL_CHARS) * 4]).decode("utf-8", errors="replace")
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    text = ANSI.sub("", text).replace("\r\n", "\n")
    return CONTROL.sub("", "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n")))


def output_lines(text: str) -> list[str]:
    """The lines of an output, right-stripped and cut to ``LINE_CHARS``.

    At most ``LINES_MAX``: a compiler's first error is near the top, a test summary at the end,
    so a long output keeps its first ``HEAD_LINES`` and its last lines.
    """
    lines = text.split("\n")
    if len(lines) > LINES_MAX:
        lines = lines[:HEAD_LINES] + lines[HEAD_LINES - LINES_MAX :]
    return [line[:LINE_CHARS].rstrip() for line in lines]


def clip(line: str) -> str:
    """One summary line: box drawing and blanks trimmed, at most ``SUMMARY_MAX`` characters."""
    line = BOX.sub("", line).strip()
    return line if len(line) <= SUMMARY_MAX else line[: SUMMARY_MAX - 1] + "…"


# -- commands -----------------------------------------------------------------------------------
def command_words(command: str) -> list[str]:
    """Shell words of a command line's first line (operators such as ``&&`` are words too)."""
    first = command[:COMMAND_MAX].split("\n", 1)[0]
    lexer = shlex.shlex(first, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return first.split()


def segments(words: list[str]) -> list[list[str]]:
    """A command's simple commands (split at ``&&``, ``||``, ``;``, ``|``)."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", "||", ";", "|", "&", ";;", "|&"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [part for part in parts if part]


def unwrap(words: list[str]) -> list[str]:
    """A simple command without env assignments, wrappers and runners (``uv run``, ``npx``)."""
    while words:
        head = basename(words[0])
        if re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]) or head in WRAPPERS:
            words = without_options(words[1:])
        elif head == "timeout":
            words = [w for w in words[1:2] if not re.fullmatch(r"[\d.]+[smhd]?", w)] + words[2:]
        elif (head, words[1] if len(words) > 1 else "") in RUNNERS:
            words = words[2:]
        elif head in ONE_WORD_RUNNERS:
            words = words[1:]
        elif is_python(head) and len(words) > 2 and words[1] == "-m":
            words = words[2:]
        else:
            return words
    return words


def without_options(words: list[str]) -> list[str]:
    """Words after a wrapper's options (``sudo -u me``, ``nice -n 10``)."""
    while words and words[0].startswith("-"):
        takes_value = words[0] in ("-u", "-g", "-n", "-C", "-p", "-h", "-U")
        words = words[2:] if takes_value else words[1:]
    return words


def basename(word: str) -> str:
    """A program's name without its directory or ``.exe``."""
    return word.rsplit("/", 1)[-1].removesuffix(".exe")


def is_python(name: str) -> bool:
    """``python``, ``python3``, ``python3.12``."""
    return bool(re.fullmatch(r"python[\d.]*", name))


def main_command(command: str) -> list[str]:
    """The simple command that matters: the first that is not setup (``cd x &&``)."""
    found = [unwrap(part) for part in segments(command_words(command))]
    found = [part for part in found if part]
    inner = next((part for part in found if basename(part[0]) not in SETUP_PROGRAMS), None)
    words = inner or (found[0] if found else [])
    if len(words) > 2 and basename(words[0]) in ("bash", "sh", "zsh") and words[1] == "-c":
        return main_command(words[2]) or words
    return words


def program_of(command: str) -> str:
    """The program a command line runs: ``uv run pytest -q`` → ``pytest``, ``cd a && npm t`` → npm.

    ``python``/``python3.12`` are ``python``; ``./scripts/test.sh`` is ``test.sh``; an empty or
    unreadable command is ``shell``.
    """
    words = main_command(command)
    if not words:
        return "shell"
    name = basename(words[0])
    if name in ("bash", "sh", "zsh") and len(words) > 1 and not words[1].startswith("-"):
        return basename(words[1])
    return "python" if is_python(name) else name


def command_key(command: str) -> str:
    """A command's identity: program, subcommand or script (``npm run build``, ``python -c#…``).

    Inline code (``python3 -c "…"``, ``node -e "…"``) is keyed by a digest of the code, so two
    different snippets are two identities and the same snippet re-run is one.
    """
    words = main_command(command)
    program = program_of(command)
    if not words:
        return program
    args = words[1:]
    if program in SCRIPT_HOSTS and args:
        return script_key(program, args)
    if program in SUBCOMMAND_PROGRAMS:
        sub = [a for a in args if not a.startswith("-")][: 2 if args[:1] == ["run"] else 1]
        return " ".join([program, *sub])
    return program


def script_key(program: str, args: list[str]) -> str:
    """``python -c#digest`` for inline code, ``python app.py`` for a script."""
    if args[0] in ("-c", "-e", "--eval") and len(args) > 1:
        return f"{program} {args[0]}#{zlib.crc32(args[1].encode('utf-8', 'replace')):08x}"
    script = next((a for a in args if not a.startswith("-")), "")
    return f"{program} {script}".strip()


# -- failure lines ------------------------------------------------------------------------------
EXCEPTION_LINE = re.compile(
    r"^(?:E\s+)?(?P<line>(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Interrupt|Exit)(?::\s.*)?)$"
)
PYTEST_ID = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)(?: - (?P<reason>.+))?$")
JEST_TITLE = re.compile(r"^\s*\u25cf (?P<line>(?!Console\b).+ \u203a .+)$")
VITEST_FAIL = re.compile(r"^\s*FAIL\s+(?P<line>\S+ > .+)$")
GO_TEST = re.compile(r"^\s*--- FAIL: (?P<id>\S+)")
CARGO_TEST = re.compile(r"^test (?P<id>\S+) \.\.\. FAILED$")
RSPEC = re.compile(r"^rspec (?P<loc>\S+) # (?P<line>.+)$")
GRADLE = re.compile(r"^(?P<line>\S+ > .+) FAILED$")
EXUNIT = re.compile(r"^\s+\d+\) test (?P<line>.+) \([\w.]+\)$")
PLAYWRIGHT = re.compile(r"^\s+\d+\) \[[\w -]+\] \u203a (?P<line>.+)$")
RUST_ERROR = re.compile(r"^error(?P<code>\[E\d+\])?: (?P<msg>.+)$")
RUST_LOCATION = re.compile(r"^\s*--> (?P<loc>\S+)")
RUST_NOISE = re.compile(r"could not compile|aborting due to|test failed, to rerun")
PAREN_ERROR = re.compile(r"^(?P<file>\S+?)\((?P<pos>\d+,\d+)\): error (?P<code>\w+): (?P<msg>.+?)$")
DASH_ERROR = re.compile(
    r"^\s*(?P<file>\S+?):(?P<pos>\d+:\d+) - error(?: (?P<code>\w+))?: (?P<msg>.+)$"
)
COLON_ERROR = re.compile(
    r"^(?P<file>[^\s:]+):(?P<pos>\d+(?::\d+)?):? (?:fatal )?error: (?P<msg>.+)$"
)
GO_ERROR = re.compile(r"^(?P<file>\S+\.go):(?P<pos>\d+:\d+): (?P<msg>.+)$")
LINT_LINE = re.compile(r"^(?P<file>[^\s:]+):(?P<pos>\d+:\d+): (?P<code>[A-Z]+\d+) (?P<msg>.+)$")
ESLINT_LINE = re.compile(r"^\s*\d+:\d+\s+(?:error|Error:)\s+(?P<msg>.+?)(?:\s{2,}\S+)?$")
RUBY_ERROR = re.compile(r"^\S+:\d+:in .+\((?P<type>\w+)\)$")
JAVA_ERROR = re.compile(r"^Exception in thread \S+ (?P<line>.+)$")
NPM_ERROR = re.compile(r"^(?:npm (?:ERR!|error)|ERR_PNPM_\w+)\s+(?P<msg>.*)$")
NPM_NOISE = re.compile(
    r"^(?:code\b|errno\b|syscall\b|path\b|A complete log|To see a list|While resolving|Found:|"
    r"node_modules|npm run\b|\s*$|/|[\w@.-]+@\S+ from|Could not resolve dependency:)"
)
SHELL_ERROR = re.compile(
    r"(?P<line>.*(?:command not found|: not found|No such file or directory|Permission denied|"
    r"is not a \w+ command|is not recognized as an internal|Segmentation fault|cannot access|"
    r"can't open file).*)$"
)
TOOL_ERROR = re.compile(r"^[\w.-]+: (?:error|fatal): (?P<msg>.+)$")
GENERIC_ERROR = re.compile(
    r"^(?:(?:error|fatal|panic|FATAL|ERROR|Error)(?:\[\w+\])?:|error (?=[A-Z])|"
    r"Error response from daemon:|FAILURE:|BUILD FAILED|\w+ error:)\s*(?P<msg>.*)$"
)
UPPER_ERROR = re.compile(r"\bERROR: (?P<msg>.+)$")
BLACK = re.compile(r"^(?P<line>would reformat .+)$")
EXIT_TEXT = re.compile(
    r"(?P<line>.*\b(?:exit(?:ed)? (?:with )?(?:code|status)|exit code:?|returned non-zero exit "
    r"status)\s*[1-9]\d*.*)$",
    re.IGNORECASE,
)
MAKE_ERROR = re.compile(r"^(?P<line>make(?:\[\d+\])?: \*\*\* .+ Error \d+)$")


def python_exception(lines: list[str]) -> str:
    """The exception line of a Python traceback (the last one: the one that ended the run)."""
    text_has_traceback = any(line.startswith("Traceback (most recent call last)") for line in lines)
    if not text_has_traceback and not any(line.startswith("E   ") for line in lines):
        return ""
    found = [m.group("line") for line in lines if (m := EXCEPTION_LINE.match(line.strip()))]
    return found[-1] if found else ""


def pytest_failures(lines: list[str]) -> str:
    """``FAILED tests/x.py::test_y - reason`` lines, the first shown, the others counted."""
    found = [m for line in lines if (m := PYTEST_ID.match(line))]
    if not found:
        return ""
    first = found[0]
    reason = first.group("reason") or python_exception(lines)
    head = f"{first.group(0).split(' - ')[0]} - {reason}" if reason else first.group(0)
    return head + (f" (+{len(found) - 1} more)" if len(found) > 1 else "")


def test_titles(lines: list[str]) -> str:
    """A failing test named by jest, vitest, go, cargo, rspec, gradle, ExUnit or Playwright."""
    for pattern in (
        JEST_TITLE,
        VITEST_FAIL,
        GO_TEST,
        CARGO_TEST,
        RSPEC,
        GRADLE,
        EXUNIT,
        PLAYWRIGHT,
    ):
        found = [m for line in lines if (m := pattern.match(line))]
        if found:
            return describe_test(found[0], len(found))
    return ""


def describe_test(match: re.Match[str], count: int) -> str:
    """One failing test as a summary line."""
    groups = match.groupdict()
    title = groups.get("line") or groups.get("id") or match.group(0)
    suffix = f" (+{count - 1} more)" if count > 1 else ""
    return f"FAILED {title.strip()}{suffix}"


def rust_error(lines: list[str]) -> str:
    """``error[E0308]: mismatched types (src/main.rs:4:18)``."""
    for index, line in enumerate(lines):
        match = RUST_ERROR.match(line)
        if match and not RUST_NOISE.search(line):
            location = next(
                (
                    m.group("loc")
                    for near in lines[index + 1 : index + 3]
                    if (m := RUST_LOCATION.match(near))
                ),
                "",
            )
            return f"{line} ({location})" if location else line
    return ""


def first_match(patterns: Iterable[re.Pattern[str]], lines: list[str]) -> str:
    """The first line any of the patterns matches (each pattern tried over all lines in turn)."""
    for pattern in patterns:
        for line in lines:
            if pattern.match(line):
                return line
    return ""


def compiler_error(lines: list[str]) -> str:
    """A compiler's or type checker's ``error`` line (tsc, C#, pyright, gcc, mypy, swift, go)."""
    return first_match((PAREN_ERROR, DASH_ERROR, COLON_ERROR, GO_ERROR), lines)


def lint_error(lines: list[str]) -> str:
    """A linter's first finding (ruff, flake8, eslint), the others counted."""
    found = [line for line in lines if LINT_LINE.match(line) or ESLINT_LINE.match(line)]
    if not found:
        return first_match((BLACK,), lines)
    return found[0].strip() + (f" (+{len(found) - 1} more)" if len(found) > 1 else "")


def npm_error(lines: list[str]) -> str:
    """The informative ``npm ERR!`` line (not its ``code``/``errno``/log path lines)."""
    for line in lines:
        match = NPM_ERROR.match(line)
        if match and not NPM_NOISE.match(match.group("msg")):
            return line
    return ""


def other_language_error(lines: list[str]) -> str:
    """Java, Ruby and Node/Deno errors."""
    return first_match((JAVA_ERROR, RUBY_ERROR), lines) or node_error(lines)


def node_error(lines: list[str]) -> str:
    """``Error: Cannot find module 'x'`` or ``TypeError: …`` followed by an ``at`` stack."""
    for index, line in enumerate(lines):
        if EXCEPTION_LINE.match(line.strip()) and any(
            near.lstrip().startswith("at ") or near.startswith("Require stack")
            for near in lines[index + 1 : index + 4]
        ):
            return line
    return ""


def shell_error(lines: list[str]) -> str:
    """A shell-level failure: command not found, no such file, permission denied."""
    return first_match((SHELL_ERROR,), lines)


def generic_error(lines: list[str]) -> str:
    """A line opening with ``error:``/``fatal:``/``ERROR:``, or ``exited with code N`` text."""
    unboxed = [BOX.sub("", line) for line in lines]
    return first_match((TOOL_ERROR, GENERIC_ERROR, UPPER_ERROR, EXIT_TEXT, MAKE_ERROR), unboxed)


# In order: the most specific line that says what failed.
DETECTORS: tuple[Callable[[list[str]], str], ...] = (
    pytest_failures,
    test_titles,
    compiler_error,
    rust_error,
    python_exception,
    lint_error,
    npm_error,
    other_language_error,
    shell_error,
    generic_error,
)
# Evidence of failure when the host gives no verdict; readers only count shell-level errors.
READER_DETECTORS: tuple[Callable[[list[str]], str], ...] = (shell_error,)
SUCCESS = re.compile(
    r"\b\d+ passed\b|All checks passed|Success: no issues found|^[ \t]*Finished\b|"
    r"^ok[ \t]+\S+[ \t]+[\d.]+s|"
    r"test result: ok\.|\b0 errors?\b|Successfully (?:installed|built|tagged|created)|"
    r"found 0 vulnerabilities|\bup to date\b|Already up to date|left unchanged|All done!|"
    r"Build succeeded|compiled successfully|nothing to commit|^PASS\b|\bDone in [\d.]+s",
    re.IGNORECASE | re.MULTILINE,
)


def failure_line(lines: list[str], detectors: tuple[Callable[[list[str]], str], ...]) -> str:
    """The first line a detector finds, in the detectors' order."""
    for detect in detectors:
        line = detect(lines)
        if line:
            return clip(line)
    return ""


# -- transient failures -------------------------------------------------------------------------
TRANSIENT = re.compile(
    r"command not found|: not found\b|is not recognized as an internal|is not a \w+ command|"
    r"Unknown command|No such command|unrecognized arguments?|unknown (?:option|flag|command)|"
    r"invalid option|[Dd]id you mean|Missing script|ERR_PNPM_NO_SCRIPT|File not found|"
    r"No rule to make target|"
    r"Connection refused|connection reset|[Cc]onnection (?:unexpectedly )?closed|"
    r"(?:connect(?:ion)?|operation|request|read|socket|network|handshake)(?: to \S+)? timed out|"
    r"Connect(?:ion)?TimeoutError|ReadTimeout|"
    r"(?-i:\b(?:ETIMEDOUT|ECONNREFUSED|ECONNRESET|EAI_AGAIN|ENOTFOUND)\b)|"
    r"Temporary failure in name resolution|Could not resolve host|Network is unreachable|"
    r"Is the server running|503 Service Unavailable|429 Too Many Requests|KeyboardInterrupt|"
    r"Resource temporarily unavailable|database is locked|Text file busy|"
    r"another git process seems to be running",
    re.IGNORECASE,
)
TRANSIENT_EXIT = frozenset({124, 127, 130, 143})
CURL_TRANSIENT_EXIT = frozenset({6, 7, 28, 35, 52, 56})


def is_transient(program: str, exit_code: int | None, summary: str, text: str) -> bool:
    """Whether a failure looks one-off: a typo, an unknown command, a network or lock blip."""
    if exit_code in TRANSIENT_EXIT or (program == "curl" and exit_code in CURL_TRANSIENT_EXIT):
        return True
    missing_argument = re.match(rf"{re.escape(program)}: .*No such file or directory", summary)
    return bool(TRANSIENT.search(summary) or TRANSIENT.search(text[-2000:]) or missing_argument)


# -- signatures ---------------------------------------------------------------------------------
TEST_ID = re.compile(r"^FAILED (?P<id>.+?)(?: - .*)?(?: \(\+\d+ more\))?$")


def error_signature(summary: str) -> str:
    """What a failure is, without what changes between runs (numbers, addresses, durations)."""
    test = TEST_ID.match(summary)
    core = test.group("id") if test else summary
    core = re.sub(r"0x[0-9a-f]+|\d+(?:\.\d+)?", "#", core.lower())
    core = re.sub(r"(?:/tmp|/var/folders)/\S+", "<tmp>", core)
    return " ".join(core.split())[:SIGNATURE_MAX]


# -- outcome ------------------------------------------------------------------------------------
def exit_code_of(value: Any) -> int | None:
    """An exit code as an ``int`` (``"1"`` too), or ``None`` when there is none."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def host_error_text(error: Any) -> str:
    """The host's error field as text ("" when it reports none)."""
    if not error:
        return ""
    if isinstance(error, Mapping):
        error = error.get("message") or error.get("name") or "error"
    return as_text(error)


def shell_status(program: str, exit_code: int | None, lines: list[str], text: str) -> Status:
    """A shell command's status: its exit code, else the evidence of its output."""
    if exit_code is not None:
        if exit_code == 0:
            return "ok"
        quiet_no = program in NEGATIVE_ANSWER and exit_code == 1
        return "ok" if quiet_no and not failure_line(lines, (shell_error,)) else "failed"
    detectors = READER_DETECTORS if program in READERS else DETECTORS
    if failure_line(lines, detectors):
        return "failed"
    if SUCCESS.search(text) or (program in READERS and text.strip()):
        return "ok"
    return "unknown"


def tool_status(exit_code: int | None, lines: list[str]) -> Status:
    """A non-shell tool's status: failed on a non-zero exit or an output opening with an error."""
    if exit_code not in (None, 0):
        return "failed"
    first = next((line.strip() for line in lines if line.strip()), "")
    failed = re.match(r"(?:error|failed|exception)\b", first, re.IGNORECASE)
    return "failed" if failed else "ok"


def tool_outcome(
    tool: str,
    *,
    args: Mapping[str, Any] | None = None,
    output: Any = "",
    exit_code: Any = None,
    error: Any = None,
) -> ToolOutcome:
    """Judge one tool call.

    Args:
        tool: The tool's name in any host's vocabulary (``bash``, ``terminal``, ``edit``…).
        args: The tool's arguments (``command`` for a shell, ``filePath`` for a file tool).
        output: What the tool returned (``str``, ``bytes`` or anything printable).
        exit_code: The exit code the host reported, or ``None`` when it reports none. Pass
            ``None`` for a LangChain ``ToolMessage(status="success")``: it is no verdict.
        error: The host's error field (a string or ``{"message": …}``), if any.

    Returns:
        The outcome; never raises, whatever the input.
    """
    args = args if isinstance(args, Mapping) else {}
    name = str(tool or "tool").lower()[:100]
    text = as_text(output)
    lines = output_lines(text)
    reported = host_error_text(error)
    code = exit_code_of(exit_code)
    if name in SHELL_TOOLS:
        command = as_text(args.get("command") or args.get("cmd") or "")[:COMMAND_MAX]
        return shell_outcome(command, code, reported, text, lines)
    return file_tool_outcome(name, args, code, reported, lines)


def shell_outcome(
    command: str, exit_code: int | None, reported: str, text: str, lines: list[str]
) -> ToolOutcome:
    """The outcome of a shell command."""
    program, key = program_of(command), command_key(command)
    status: Status = "failed" if reported else shell_status(program, exit_code, lines, text)
    if status != "failed":
        return ToolOutcome(status=status, command_key=key, program=program)
    error_lines = output_lines(reported) + lines if reported else lines
    summary = failure_line(error_lines, DETECTORS) or last_words(error_lines, program, exit_code)
    return ToolOutcome(
        status="failed",
        summary=summary,
        signature=f"{key}|{error_signature(summary)}",
        command_key=key,
        program=program,
        transient=is_transient(program, exit_code, summary, reported + "\n" + text),
    )


def last_words(lines: list[str], program: str, exit_code: int | None) -> str:
    """A failure with no recognisable line: its last non-blank line, else the exit code."""
    last = next((clip(line) for line in reversed(lines) if line.strip()), "")
    code = f" exited with code {exit_code}" if exit_code is not None else " failed"
    return f"{program}: {last}" if last else f"{program}{code}"


def file_tool_outcome(
    name: str, args: Mapping[str, Any], exit_code: int | None, reported: str, lines: list[str]
) -> ToolOutcome:
    """The outcome of a non-shell tool, keyed by its file when it names one."""
    path = path_arg(args)
    key = f"file:{path}" if path else f"tool:{name}"
    status = "failed" if reported else tool_status(exit_code, lines)
    if status != "failed":
        return ToolOutcome(status=status, command_key=key)
    summary = clip(first_text(output_lines(reported) if reported else lines) or f"{name} failed")
    return ToolOutcome(
        status="failed",
        summary=summary,
        signature=f"{key}|{error_signature(summary)}",
        command_key=key,
        transient=bool(TRANSIENT.search(summary)),
    )


def first_text(lines: list[str]) -> str:
    """The first non-blank line."""
    return next((line for line in lines if line.strip()), "")


def path_arg(args: Mapping[str, Any]) -> str:
    """The file a tool's arguments name, if any."""
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:512]
    return ""


# -- files touched ------------------------------------------------------------------------------
PATCH_FILE = re.compile(
    r"^\*\*\* (?P<verb>Update|Add|Delete) File: (?P<path>\S.*?)\s*$|"
    r"^\+\+\+ (?:b/)?(?P<plus>[^\s]+)|^\*\*\* Move to: (?P<moved>\S.*?)\s*$",
    re.MULTILINE,
)
PATCH_ACTIONS: dict[str, FileAction] = {"Update": "edit", "Add": "write", "Delete": "delete"}
SHELL_FILE_COMMANDS: dict[str, FileAction] = {
    "rm": "delete",
    "unlink": "delete",
    "touch": "write",
    "tee": "write",
    "mv": "write",
    "prettier": "edit",
    "black": "edit",
    "gofmt": "edit",
    "rustfmt": "edit",
    "isort": "edit",
    "autopep8": "edit",
}


def touched_files(tool: str, args: Mapping[str, Any] | None = None) -> tuple[FileTouch, ...]:
    """The files a (successful) tool call read, wrote, edited or deleted; at most ``FILES_MAX``.

    File tools name their file; patches list theirs; shell commands that change files say so
    (``sed -i``, ``mv``, ``rm``, ``touch``, ``cp``'s target, ``>``/``>>``, ``tee``, formatters).
    Searches and test runs touch nothing.
    """
    args = args if isinstance(args, Mapping) else {}
    name = str(tool or "").lower()
    if name in SHELL_TOOLS:
        found = shell_files(as_text(args.get("command") or args.get("cmd") or ""))
    elif name in PATCH_TOOLS:
        found = patch_files(args)
    else:
        found = file_tool_files(name, args)
    return tuple(dict.fromkeys(found))[:FILES_MAX]


def file_tool_files(name: str, args: Mapping[str, Any]) -> list[FileTouch]:
    """The file of a read, write or edit tool (``str_replace_editor``'s ``command`` says which)."""
    path = path_arg(args)
    if not path:
        return []
    sub = str(args.get("command") or "").lower()
    if name in READ_TOOLS or sub == "view":
        return [FileTouch(path=path, action="read")]
    if name in WRITE_TOOLS or sub == "create":
        return [FileTouch(path=path, action="write")]
    if name in EDIT_TOOLS or name in PATCH_TOOLS:
        return [FileTouch(path=path, action="edit")]
    return []


def patch_files(args: Mapping[str, Any]) -> list[FileTouch]:
    """The files a patch names (``*** Update File: x`` or a unified diff's ``+++ b/x``)."""
    text = next((args[k] for k in PATCH_KEYS if isinstance(args.get(k), str)), "")
    found = []
    for match in PATCH_FILE.finditer(as_text(text)):
        path = match.group("path") or match.group("plus") or match.group("moved")
        action = PATCH_ACTIONS.get(match.group("verb") or "", "edit")
        if path and path != "/dev/null":
            found.append(FileTouch(path=path, action=action))
    return found or file_tool_files("patch", args)


def shell_files(command: str) -> list[FileTouch]:
    """Files a shell command line changes."""
    found: list[FileTouch] = []
    for part in segments(command_words(command[:COMMAND_MAX])):
        found.extend(redirect_targets(part))
        found.extend(command_targets(unwrap(part)))
    return found


def redirect_targets(words: list[str]) -> list[FileTouch]:
    """``> file``, ``>> file``."""
    return [
        FileTouch(path=target, action="write")
        for op, target in zip(words, words[1:], strict=False)
        if op in (">", ">>", ">|", "&>") and looks_like_path(target)
    ]


def command_targets(words: list[str]) -> list[FileTouch]:
    """The files a file-changing program acts on (``sed -i``, ``mv a b``, ``cp a b``…)."""
    if not words:
        return []
    program, rest = basename(words[0]), words[1:]
    if program == "git" and rest[:1] in (["mv"], ["rm"]):
        program, rest = rest[0], rest[1:]
    if program in ("sed", "perl"):
        return in_place_targets(rest)
    args = file_args(rest)
    if program == "cp":
        return [FileTouch(path=args[-1], action="write")] if len(args) > 1 else []
    if program == "ruff" and "format" in rest:
        return [FileTouch(path=a, action="edit") for a in args]
    action = SHELL_FILE_COMMANDS.get(program)
    return [FileTouch(path=a, action=action) for a in args] if action else []


def in_place_targets(words: list[str]) -> list[FileTouch]:
    """The files ``sed -i``/``perl -i`` edit (the first plain argument is the script)."""
    if not any(word.startswith("-i") or word == "--in-place" for word in words):
        return []
    plain = [word for word in words if not word.startswith("-")]
    files = plain if "-e" in words else plain[1:]
    return [FileTouch(path=word, action="edit") for word in files if looks_like_path(word)]


def file_args(words: list[str]) -> list[str]:
    """The arguments that look like file paths (no options, no redirections)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip or word.startswith("-"):
            skip = False
            continue
        if word in (">", ">>", "<", "<<", "<<<", "2>", "&>", ">|"):
            skip = True
            continue
        kept.append(word)
    return [word for word in kept if looks_like_path(word)]


def looks_like_path(word: str) -> bool:
    """A file path: has a directory or an extension, is not a URL, a glob or a directory."""
    if not word or len(word) > 512 or "://" in word or any(c in word for c in "*?{}$`"):
        return False
    if word in (".", "..") or word.endswith("/") or word.startswith("/dev/"):
        return False
    return "/" in word or bool(re.search(r"\.\w{1,10}$", word)) or word.startswith(".")


__all__ = [
    "SHELL_TOOLS",
    "FileTouch",
    "ToolOutcome",
    "command_key",
    "error_signature",
    "program_of",
    "tool_outcome",
    "touched_files",
]
