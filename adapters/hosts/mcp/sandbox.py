"""Shell commands in the worktree, with a timeout that kills the whole process group.

A command runs as ``bash -c`` in its own session (process group), stdin closed (or a file), stdout
and stderr merged. At the timeout the group gets SIGTERM, then SIGKILL; what it printed so far is
kept. Paths handed in by a client are resolved (symlinks too) and must stay inside the worktree.
The groups still running are listed in a set the caller gives (:func:`run_command`'s
``groups``), so a server that goes away stops them all (:func:`stop_groups`), commands that
ignore SIGTERM included.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from plait.state.base.errors import UsageError

DEFAULT_TIMEOUT_SECONDS = 30.0
MAX_TIMEOUT_SECONDS = 120.0
OUTPUT_KEPT_BYTES = 4 * 1024 * 1024
KILL_GRACE_SECONDS = 0.5
READ_CHUNK_BYTES = 65_536
EXIT_POLL_SECONDS = 0.05


class PathOutsideWorktree(UsageError):
    """A client named a path that resolves outside the worktree."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandResult:
    """What a command did: exit code (None if it never exited), output, whether it timed out."""

    command: str
    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool
    seconds: float

    @property
    def ok(self) -> bool:
        """Exited 0 within its time."""
        return self.exit_code == 0 and not self.timed_out


def clamp_timeout(seconds: float | None) -> float:
    """The timeout to use: the default when none is given, between 0.1 s and the maximum."""
    if seconds is None:
        return DEFAULT_TIMEOUT_SECONDS
    return min(max(float(seconds), 0.1), MAX_TIMEOUT_SECONDS)


def resolve_inside(worktree: Path, path: str) -> Path:
    """``path`` (relative to the worktree or absolute) resolved, symlinks too, inside the worktree.

    Raises:
        PathOutsideWorktree: the resolved path is not under the worktree.
    """
    root = worktree.resolve()
    candidate = Path(path).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if resolved != root and root not in resolved.parents:
        raise PathOutsideWorktree(f"path {path!r} is outside the worktree {str(root)!r}")
    return resolved


class OutputBuffer:
    """Merged output, capped: the head and a rolling tail are kept when it grows too large."""

    def __init__(self, limit: int = OUTPUT_KEPT_BYTES) -> None:
        """Keep at most ``limit`` bytes."""
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        """Append what the process printed."""
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        excess = len(self.tail) - self.limit // 2
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        """The kept output as text, with a marker where bytes were dropped."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        if not self.dropped:
            return head + tail
        return f"{head}\n… [{self.dropped} bytes of output dropped] …\n{tail}"


async def pump(stream: asyncio.StreamReader, buffer: OutputBuffer) -> None:
    """Copy a stream into the buffer until it ends."""
    while data := await stream.read(READ_CHUNK_BYTES):
        buffer.add(data)


def signal_group(pid: int, signum: int) -> None:
    """Send a signal to a process group, ignoring one that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


async def exited(process: asyncio.subprocess.Process, seconds: float) -> bool:
    """Whether the shell exits within ``seconds`` (its output pipe may stay open)."""
    deadline = time.monotonic() + seconds
    while process.returncode is None and time.monotonic() < deadline:
        await asyncio.sleep(EXIT_POLL_SECONDS)
    return process.returncode is not None


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group, then SIGKILL what is left."""
    signal_group(process.pid, signal.SIGTERM)
    if not await exited(process, KILL_GRACE_SECONDS):
        signal_group(process.pid, signal.SIGKILL)
        await exited(process, KILL_GRACE_SECONDS * 4)


def stop_groups(groups: set[int], grace_seconds: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM every process group in ``groups``, then SIGKILL what is left; empty the set.

    Synchronous, so it also runs where nothing can be awaited any more (a server shutting down).
    """
    pending = set(groups)
    groups.clear()
    for group in pending:
        signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while pending and time.monotonic() < deadline:
        time.sleep(EXIT_POLL_SECONDS)
        pending = {group for group in pending if group_alive(group)}
    for group in pending:
        signal_group(group, signal.SIGKILL)


def group_alive(group: int) -> bool:
    """Whether any process of the group is left."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float | None = None,
    stdin: IO[bytes] | None = None,
    env: dict[str, str] | None = None,
    groups: set[int] | None = None,
) -> CommandResult:
    """Run ``bash -c command`` in ``cwd``; at the timeout kill its group, keep the output.

    ``groups`` holds the command's process group while it runs (see :func:`stop_groups`).
    """
    seconds = clamp_timeout(timeout)
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        cwd=cwd,
        stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    buffer = OutputBuffer()
    assert process.stdout is not None
    reader = asyncio.create_task(pump(process.stdout, buffer))
    running = groups if groups is not None else set()
    running.add(process.pid)
    try:
        timed_out = await wait_for_exit(process, reader, seconds)
        if timed_out:
            await stop_group(process)
        await finish_reading(reader, process)
    except asyncio.CancelledError:
        reader.cancel()
        stop_groups({process.pid})  # synchronous: a cancelled task's awaits may be cut short
        raise
    finally:
        running.discard(process.pid)
    return CommandResult(
        command=command,
        exit_code=process.returncode,
        output=buffer.text(),
        timed_out=timed_out,
        truncated=buffer.dropped > 0,
        seconds=time.monotonic() - started,
    )


async def wait_for_exit(
    process: asyncio.subprocess.Process, reader: asyncio.Task[None], seconds: float
) -> bool:
    """Wait until the shell exits; True if it was still running at the timeout.

    ``Process.wait()`` also waits for the output pipe to close, which a background grandchild
    can hold open for ever, so the exit status is watched instead.
    """
    deadline = time.monotonic() + seconds
    while process.returncode is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        await asyncio.wait({reader}, timeout=min(remaining, EXIT_POLL_SECONDS))
        if reader.done():
            try:
                await asyncio.wait_for(process.wait(), max(remaining, 0.01))
            except TimeoutError:
                return True
    return False


async def finish_reading(reader: asyncio.Task[None], process: asyncio.subprocess.Process) -> None:
    """Drain the pipe; processes the command left behind holding it open are killed."""
    try:
        await asyncio.wait_for(asyncio.shield(reader), KILL_GRACE_SECONDS * 2)
    except TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
        try:
            await asyncio.wait_for(reader, KILL_GRACE_SECONDS * 2)
        except TimeoutError:
            # A process outside the group (setsid) holds the pipe: keep what was read and close
            # our end (asyncio offers no public way to close a subprocess pipe early).
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()


__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_TIMEOUT_SECONDS",
    "CommandResult",
    "OutputBuffer",
    "PathOutsideWorktree",
    "clamp_timeout",
    "resolve_inside",
    "run_command",
    "stop_groups",
]
