"""The hook client's work (see the package docstring); standard library only, on purpose.

Everything here runs in a process the host starts for one hook: no pydantic, no httpx, no
plait modules above this folder, so the process is up and answered in tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import sys
import time

from plait.state.base.standby import standby_answer

# typing, dataclasses, pathlib and secrets are left out: they would double the start time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

STRING_MAX = 64 * 1024
CUT_MARK = "…[cut by plait: {} characters]"
STDIN_MAX = 64 * 1024 * 1024
TIMEOUT_S = float(os.environ.get("PLAIT_HOOK_TIMEOUT_S", "5"))
CONNECT_TIMEOUT_S = 0.3
START_INTERVAL_S = 15.0
ROUTE = "/v1/host"
SERVICES_DIR = "services"
SPOOL_DIR = "spool"


class HookCall:
    """One hook as the client forwards it."""

    __slots__ = ("call_id", "event", "host", "keep", "payload")

    def __init__(
        self, *, host: str, event: str, payload: Any, keep: bool = False, call_id: str = ""
    ) -> None:
        """The call of ``host``'s ``event`` with the host's JSON."""
        self.host, self.event, self.payload = host, event, payload
        self.keep, self.call_id = keep, call_id


class Reply:
    """What the service answered: HTTP status, the ``X-Plait-Kept`` header and the body."""

    __slots__ = ("body", "kept", "status")

    def __init__(self, *, status: int, kept: str, body: bytes) -> None:
        """A parsed response."""
        self.status, self.kept, self.body = status, kept, body


# -- where things are ---------------------------------------------------------------------------
def data_dir() -> str:
    """``PLAIT_DATA_DIR``, else the platform's user data dir (as ``plait serve`` uses it)."""
    configured = os.environ.get("PLAIT_DATA_DIR")
    if configured:
        return os.path.expanduser(configured)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return os.path.join(base, "plait")


def project_dir() -> str:
    """``PLAIT_PROJECT_DIR``, else the working directory the host started the hook in."""
    return os.environ.get("PLAIT_PROJECT_DIR") or os.getcwd()


def project_key(project: str) -> str:
    """The key :func:`plait.state.groups.project_key` computes (it is not imported: start time)."""
    return hashlib.sha256(os.path.realpath(project).encode()).hexdigest()[:16]


def read_text(path: str) -> str:
    """A small file's text."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def service_addresses(data: str, key: str) -> list[tuple[str, str]]:
    """The service's URLs with the token, in the order to try; none when none is known.

    ``PLAIT_URL`` may list several, comma-separated (replicas of a shared service): a call goes
    to the first that answers.
    """
    urls = [url.strip() for url in os.environ.get("PLAIT_URL", "").split(",") if url.strip()]
    if not urls:
        try:
            announced = read_text(os.path.join(data, SERVICES_DIR, f"{key}.json"))
            urls = [str(json.loads(announced)["url"])]
        except (OSError, ValueError, KeyError, TypeError):
            return []
    token = os.environ.get("PLAIT_TOKEN")
    if not token:
        try:
            token = read_text(os.path.join(data, "token")).strip()
        except OSError:
            return []
    return [(url, token) for url in urls] if token else []


# -- reading the host's JSON ----------------------------------------------------------------------
def cut_strings(value: Any, limit: int = STRING_MAX) -> Any:
    """``value`` with every string longer than ``limit`` cut and marked (a 10 MB tool output)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + CUT_MARK.format(len(value))
    if isinstance(value, dict):
        return {key: cut_strings(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [cut_strings(item, limit) for item in value]
    return value


def read_payload(stream: IO[bytes]) -> Any:
    """The host's JSON from ``stream``; ValueError with the reason when it is not JSON."""
    raw = stream.read(STDIN_MAX + 1)
    if len(raw) > STDIN_MAX:
        raise ValueError(f"stdin is over {STDIN_MAX} bytes")
    if not raw.strip():
        raise ValueError("stdin is empty")
    try:
        return cut_strings(json.loads(raw))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"stdin is not JSON ({error})") from None


# -- talking to the service ----------------------------------------------------------------------
def post(url: str, token: str, body: bytes, timeout: float = TIMEOUT_S) -> Reply:
    """POST ``body`` to :data:`ROUTE` over plain HTTP/1.1 (loopback); OSError when unreachable."""
    rest = url.split("://", 1)[-1].rstrip("/")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    request = (
        f"POST {ROUTE} HTTP/1.1\r\nHost: {rest}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S) as sock:
        sock.settimeout(timeout)
        sock.sendall(request + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return parse_reply(b"".join(chunks))


def parse_reply(raw: bytes) -> Reply:
    """Status, ``X-Plait-Kept`` and body of an HTTP/1.1 response (``Content-Length`` framed)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = dict(line.lower().split(":", 1) for line in lines[1:] if ":" in line)
    length = headers.get("content-length")
    if length is not None:
        body = body[: int(length)]
    return Reply(status=status, kept=headers.get("x-plait-kept", "").strip(), body=body)


def start_service(data: str, key: str, project: str) -> str:
    """Start ``plait serve`` detached, unless one was started within :data:`START_INTERVAL_S`.

    Returns what happened, for stderr.
    """
    import shlex  # here only: a hook with the service up never starts one
    import subprocess

    marker = os.path.join(data, SERVICES_DIR, f"{key}.starting")
    with contextlib.suppress(OSError):
        if time.time() - os.stat(marker).st_mtime < START_INTERVAL_S:
            return "plait serve is not answering yet (starting)"
    configured = os.environ.get("PLAIT_SERVE_COMMAND", "plait serve")
    # a JSON list, as the OpenCode plugin reads it, or a command line
    command = json.loads(configured) if configured.startswith("[") else shlex.split(configured)
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        subprocess.Popen(
            [*command, "--project", project],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        return f"plait serve is not running and {command[0]!r} cannot start it ({error})"
    return "plait serve is not running; started it"


# -- keeping a call the service did not keep -----------------------------------------------------
def redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with ``redact`` applied to every string in it (keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(key)): redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted(item, redact) for item in value]
    return value


def spool_line(call: HookCall) -> bytes:
    """The call as a line of plait's file spool (``plait.adapters.backends.spool``), redacted."""
    from plait.state.base.redact import redact  # here only: it costs what a fast hook cannot

    record = {
        "seq": 1,
        "id": call.call_id,
        "lane": "",
        "host": call.host,
        "call": {"event": call.event, "payload": redacted(call.payload, redact)},
        "at": time.time(),
    }
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def write_spool(data: str, key: str, call: HookCall) -> str:
    """Write the call to a spool file of its own, under its lock, so the service adopts it."""
    line = spool_line(call)
    folder = os.path.join(data, SPOOL_DIR, key)
    os.makedirs(data, mode=0o700, exist_ok=True)
    for directory in (os.path.join(data, SPOOL_DIR), folder):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, mode=0o700)
    stem = os.path.join(folder, f"hook-{os.getpid()}-{os.urandom(4).hex()}")
    lock = os.open(f"{stem}.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = f"{stem}.jsonl"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(descriptor, line)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    finally:
        os.close(lock)
    return path


# -- one hook ---------------------------------------------------------------------------------
def forward(call: HookCall, data: str, key: str, project: str) -> tuple[bytes, str]:
    """Send the call; the answer to print and a note for stderr (empty when all went well)."""
    body = json.dumps(
        {"host": call.host, "event": call.event, "payload": call.payload, "call_id": call.call_id}
    ).encode()
    reply = None
    for address in service_addresses(data, key):  # the same call_id everywhere: stored once
        with contextlib.suppress(OSError, ValueError, IndexError):
            reply = post(*address, body)
            break
    if reply is None:
        note = start_service(data, key, project)
        return standby(call, data, key), keep_locally(call, data, key, note)
    if reply.status == 200:
        return reply.body, ""
    detail = reply.body.decode("utf-8", "replace")[:300].replace("\n", " ")
    if reply.status == 503:
        note = f"plait did not keep the call: {detail}"
        return standby(call, data, key), keep_locally(call, data, key, note)
    return b"", f"plait refused the {call.event} call ({reply.status}): {detail}"


def standby(call: HookCall, data: str, key: str) -> bytes:
    """The memory the service last gave this session (else the project) for this event."""
    session = call.payload.get("session_id") if isinstance(call.payload, dict) else None
    if not isinstance(session, str) or not session:
        return b""
    return standby_answer(data, key, call.host, session, call.event)


def keep_locally(call: HookCall, data: str, key: str, why: str) -> str:
    """Spool a ``--keep`` call; the note for stderr."""
    if not call.keep:
        return why
    path = write_spool(data, key, call)
    return f"{why}; the call waits in {os.path.basename(path)}"


def run(argv: list[str], stdin: IO[bytes], stdout: IO[bytes]) -> str:
    """One hook: read, forward, answer. Returns the note for stderr ("" when none)."""
    args = [arg for arg in argv if arg != "--keep"]
    if len(args) != 2:
        return "usage: plait-hook HOST EVENT [--keep]"
    try:
        payload = read_payload(stdin)
    except ValueError as error:
        return f"{args[1]}: {error}"
    call = HookCall(
        host=args[0],
        event=args[1],
        payload=payload,
        keep="--keep" in argv,
        call_id=os.urandom(16).hex(),
    )
    project = project_dir()
    data = data_dir()
    answer, note = forward(call, data, project_key(project), project)
    if answer.strip() and answer.strip() != b"{}":
        stdout.write(answer)
        stdout.flush()
    return note


def main() -> None:
    """The ``plait-hook`` command: never fails the host (exit 0, a one-line reason on stderr)."""
    try:
        note = run(sys.argv[1:], sys.stdin.buffer, sys.stdout.buffer)
    except Exception as error:  # the host must go on, whatever happened here
        note = f"{type(error).__name__}: {error}"
    if note:
        sys.stderr.write(f"plait-hook: {note}\n")
    sys.exit(0)


__all__ = ["START_INTERVAL_S", "STRING_MAX", "HookCall", "Reply", "main", "run"]
