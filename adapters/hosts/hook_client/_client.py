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

from plait.state.base.errors import NotYourSession
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
OUTBOX_DIR = "outbox"
# A replica that answered a session's recording call "spooled" holds it in its spool: the
# session's next recording calls go to it alone (kept in the outbox while it does not answer),
# so another replica does not store them first; for at most this long (as the plugin does).
HOLD_MS_DEFAULT = "60000"
HOLD_PREFIX = ".hold-"
FLUSH_BUDGET_S = 2.0  # a hook sends what waits in its outbox for at most this long
FLUSHER_PAUSES_S = (0.5, 1.0, 2.0, 4.0)  # between the flusher's tries (the last repeats)
FLUSHER_LIFE_S = 900.0  # a flusher gives up after this; the next hook starts another
FLUSHER_LOCK = ".flusher"
# refused before the service read the call (token, rate, timeout): it may go again later
NOT_READ = frozenset({401, 403, 408, 429})
# a 403 that read the call: its session is another member's, and sending it again cannot help
NOT_YOURS = b'"error":"%s"' % NotYourSession.code.encode()


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
class Endpoint:
    """Where a service URL points: ``http[s]://host[:port][/prefix]`` (a proxy may add a prefix).

    Parsed here rather than with :mod:`urllib.parse`, whose import costs a fast hook a few ms.
    ValueError when the URL is not one.
    """

    __slots__ = ("host", "netloc", "port", "prefix", "tls")

    def __init__(self, url: str) -> None:
        """Parse ``url`` (no scheme means ``http``)."""
        scheme, found, rest = url.strip().partition("://")
        if not found:
            scheme, rest = "http", url.strip()
        if scheme.lower() not in ("http", "https"):
            raise ValueError(f"{url!r} is not an http(s) URL")
        self.tls = scheme.lower() == "https"
        netloc, _, path = rest.partition("/")
        host, port = netloc, ""
        if netloc.startswith("["):  # [::1]:8080
            host, _, tail = netloc[1:].partition("]")
            port = tail.removeprefix(":")
        elif netloc.count(":") == 1:
            host, _, port = netloc.partition(":")
        if not host or (port and not port.isdigit()):
            raise ValueError(f"{url!r} has no host or a bad port")
        self.host, self.netloc = host, netloc
        self.port = int(port) if port else (443 if self.tls else 80)
        self.prefix = "/" + path.strip("/") if path.strip("/") else ""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    return host in ("localhost", "::1") or host.startswith("127.")


def on_other_machines(urls: str) -> bool:
    """Whether a comma-separated list of service URLs names a host beyond this machine."""
    for url in urls.split(","):
        if not url.strip():
            continue
        try:
            host = Endpoint(url).host
        except ValueError:
            continue
        if not is_loopback(host):
            return True
    return False


def post(url: str, token: str, body: bytes, timeout: float = TIMEOUT_S) -> Reply:
    """POST ``body`` to :data:`ROUTE` over HTTP/1.1, or HTTPS for an ``https://`` URL.

    The certificate is checked against the system's authorities (``SSL_CERT_FILE`` names
    another bundle, e.g. a team's own). OSError when unreachable, ValueError on a bad URL.
    """
    endpoint = Endpoint(url)
    request = (
        f"POST {endpoint.prefix}{ROUTE} HTTP/1.1\r\nHost: {endpoint.netloc}\r\n"
        f"Authorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    address = (endpoint.host, endpoint.port)
    with socket.create_connection(address, timeout=CONNECT_TIMEOUT_S) as raw:
        sock = raw
        if endpoint.tls:
            import ssl  # here only: a loopback service speaks plain HTTP

            sock = ssl.create_default_context().wrap_socket(raw, server_hostname=endpoint.host)
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


def chosen_services() -> bool:
    """Whether ``PLAIT_URL`` names the service (a shared one, perhaps remote).

    Then a call it did not keep waits in the client's own outbox, sent to it once it answers
    (a local ``plait serve`` is started only when it names this machine); else the local
    service's spool holds it.
    """
    return bool(os.environ.get("PLAIT_URL", "").strip())


def outbox(data: str, key: str) -> str:
    """The project's outbox folder: a call a chosen service did not keep, a file each."""
    return os.path.join(data, OUTBOX_DIR, key)


def outbox_body(call: HookCall) -> bytes:
    """What the call posts, its payload redacted (nothing raw waits on disk)."""
    from plait.state.base.redact import redact  # here only: it costs what a fast hook cannot

    return json.dumps(
        {
            "host": call.host,
            "event": call.event,
            "payload": redacted(call.payload, redact),
            "call_id": call.call_id,
        }
    ).encode()


def write_outbox(data: str, key: str, call: HookCall) -> str:
    """Keep the call in the outbox, named so the files sort in the order they were kept."""
    folder = outbox(data, key)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"
    partial = os.path.join(folder, f".{name}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(descriptor, outbox_body(call))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.rename(partial, os.path.join(folder, name))  # whole or not there
    return os.path.join(folder, name)


def waiting(data: str, key: str) -> list[str]:
    """The outbox's calls, oldest first."""
    try:
        names = os.listdir(outbox(data, key))
    except OSError:
        return []
    return sorted(name for name in names if name.endswith(".json") and not name.startswith("."))


def flush_outbox(data: str, key: str, addresses: list[tuple[str, str]]) -> int:
    """Send the outbox's calls, oldest first, each with its call id (stored once); how many wait.

    A call the service answered (200: kept; 4xx: dead-lettered there, never sent again) leaves
    the outbox; the first it did not keep (503, unreachable) stops the flush, so the session's
    order holds. One hook flushes at a time (a lock); another finds it busy and goes on.
    """
    names = waiting(data, key)
    if not names:
        return 0
    folder = outbox(data, key)
    lock = os.open(os.path.join(folder, ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return len(names)
        deadline = time.monotonic() + FLUSH_BUDGET_S
        names = waiting(data, key)
        for index, name in enumerate(names):
            path = os.path.join(folder, name)
            if time.monotonic() > deadline or not sent(path, addresses, data, key):
                return len(names) - index
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
        return 0
    finally:
        os.close(lock)


def start_flusher(data: str, key: str) -> None:
    """Start the outbox's flusher, detached, unless one runs (it holds :data:`FLUSHER_LOCK`).

    So what waits is sent once a listed service answers again, whether or not the host calls
    another hook (a session that ended, a person who went home).
    """
    import subprocess  # here only: a hook whose call was kept starts none

    lock = os.open(os.path.join(outbox(data, key), FLUSHER_LOCK), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # a flusher runs
    finally:
        os.close(lock)  # released: the flusher takes it
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "plait.adapters.hosts.hook_client", "--flush", data, key],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


def run_flusher(data: str, key: str) -> str:
    """The flusher: send the outbox, pausing between tries, until it is empty (or too long).

    Returns why it stopped. A second flusher finds the lock held and stops at once.
    """
    lock = os.open(os.path.join(outbox(data, key), FLUSHER_LOCK), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "another flusher runs"
        os.ftruncate(lock, 0)
        os.write(lock, str(os.getpid()).encode())  # who it is, for a person (or a test)
        deadline = time.monotonic() + FLUSHER_LIFE_S
        tries = 0
        while flush_outbox(data, key, service_addresses(data, key)):
            if time.monotonic() > deadline:
                return "gave up for now; the next hook starts another"
            time.sleep(FLUSHER_PAUSES_S[min(tries, len(FLUSHER_PAUSES_S) - 1)])
            tries += 1
        return ""
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(lock, 0)  # no pid left behind that names another process later
        os.close(lock)


def done_with(status: int, body: bytes = b"") -> bool:
    """Whether a call the service answered with ``status`` is settled (never sent again).

    200: kept. Another 4xx: the service read it and dead-lettered it, or refused its session
    (:data:`NOT_YOURS`). A 5xx, or a refusal before it was read (:data:`NOT_READ`), leaves it to
    be sent again.
    """
    if status == 403 and NOT_YOURS in body:
        return True
    return status == 200 or (400 <= status < 500 and status not in NOT_READ)


def sent(path: str, addresses: list[tuple[str, str]], data: str, key: str) -> bool:
    """Post one kept call to the first service that answers; whether it is done with.

    While a replica holds the call's session's earlier calls, to that replica alone.
    """
    try:
        with open(path, "rb") as handle:
            body = handle.read()
    except FileNotFoundError:
        return True  # another flush sent it
    try:
        session = session_of(json.loads(body).get("payload"))
    except (ValueError, AttributeError):
        session = ""
    for address in held_first(addresses, data, key, session):
        with contextlib.suppress(OSError, ValueError, IndexError):
            reply = post(*address, body)
            note_hold(data, key, session, address[0], reply.kept, len(addresses))
            return done_with(reply.status, reply.body)
    return False


# -- a replica that holds a session's earlier calls ---------------------------------------------
def session_of(payload: Any) -> str:
    """The session a hook's payload names ("" for none)."""
    session = payload.get("session_id") if isinstance(payload, dict) else None
    return session if isinstance(session, str) else ""


def hold_path(data: str, key: str, session: str) -> str:
    """The file naming the replica that holds ``session``'s earlier calls (its time: since)."""
    digest = hashlib.sha256(session.encode()).hexdigest()[:32]
    return os.path.join(outbox(data, key), f"{HOLD_PREFIX}{digest}")


def held_first(
    addresses: list[tuple[str, str]], data: str, key: str, session: str
) -> list[tuple[str, str]]:
    """Where a recording call of ``session`` may go, in order.

    The replica that answered its last one "spooled" alone, for ``PLAIT_HOLD_MS`` (60 s) since;
    else every listed service.
    """
    if not session or len(addresses) < 2:
        return addresses
    path = hold_path(data, key, session)
    hold_s = float(os.environ.get("PLAIT_HOLD_MS", HOLD_MS_DEFAULT)) / 1000
    try:
        if time.time() - os.stat(path).st_mtime > hold_s:
            return addresses
        holder = read_text(path).strip()
    except OSError:
        return addresses
    return [address for address in addresses if address[0] == holder] or addresses


def note_hold(data: str, key: str, session: str, url: str, kept: str, listed: int) -> None:
    """Remember the replica that answered a recording call "spooled"; forget it once "stored"."""
    if not session or listed < 2 or kept not in ("spooled", "stored"):
        return
    path = hold_path(data, key, session)
    with contextlib.suppress(OSError):
        if kept == "stored":
            if read_text(path).strip() == url:
                os.unlink(path)
            return
        os.makedirs(outbox(data, key), mode=0o700, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(descriptor, url.encode())
        finally:
            os.close(descriptor)


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
    addresses = service_addresses(data, key)
    chosen = chosen_services()
    if chosen and flush_outbox(data, key, addresses) and call.keep:  # after what waits
        return standby(call, data, key), keep_locally(call, data, key, "earlier calls wait")
    reply = None
    session = session_of(call.payload) if call.keep else ""
    targets = held_first(addresses, data, key, session)
    for address in targets:  # the same call_id everywhere: stored once
        with contextlib.suppress(OSError, ValueError, IndexError):
            reply = post(*address, body)
            note_hold(data, key, session, address[0], reply.kept, len(addresses))
            break
    if reply is None:
        note = "no service in PLAIT_URL answered"
        if len(targets) < len(addresses):
            note = f"the replica holding the session's earlier calls ({targets[0][0]}) is down"
        if not chosen or not on_other_machines(os.environ.get("PLAIT_URL", "")):
            note = start_service(data, key, project)  # one on this machine may be ours to start
        return standby(call, data, key), keep_locally(call, data, key, note)
    if reply.status == 200:
        return reply.body, ""
    detail = reply.body.decode("utf-8", "replace")[:300].replace("\n", " ")
    if not done_with(reply.status, reply.body):
        note = f"plait did not keep the call ({reply.status}): {detail}"
        return standby(call, data, key), keep_locally(call, data, key, note)
    return b"", f"plait refused the {call.event} call ({reply.status}): {detail}"


def standby(call: HookCall, data: str, key: str) -> bytes:
    """The memory the service last gave this session (else the project) for this event."""
    session = session_of(call.payload)
    return standby_answer(data, key, call.host, session, call.event) if session else b""


def keep_locally(call: HookCall, data: str, key: str, why: str) -> str:
    """Keep a ``--keep`` call (the outbox for a chosen service, else the spool); stderr's note."""
    if not call.keep:
        return why
    if chosen_services():
        path = write_outbox(data, key, call)
        start_flusher(data, key)
        name = os.path.basename(path)
        return f"{why}; the call waits in the outbox ({name}), sent when a service answers"
    path = write_spool(data, key, call)
    return f"{why}; the call waits in {os.path.basename(path)}"


def run(argv: list[str], stdin: IO[bytes], stdout: IO[bytes]) -> str:
    """One hook: read, forward, answer. Returns the note for stderr ("" when none).

    ``--flush DATA_DIR PROJECT_KEY`` runs the outbox's flusher instead (:func:`start_flusher`).
    """
    if argv[:1] == ["--flush"] and len(argv) == 3:
        return run_flusher(argv[1], argv[2])
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


__all__ = [
    "FLUSHER_LIFE_S",
    "START_INTERVAL_S",
    "STRING_MAX",
    "HookCall",
    "Reply",
    "is_loopback",
    "main",
    "on_other_machines",
    "project_key",
    "run",
    "service_addresses",
]
