"""The spool: host calls kept in local files while the hot tier cannot take them.

One folder per project, ``<data_dir>/spool/<project_key>/`` (0700, files 0600):

=====================  ==========================================================================
``<owner>.jsonl``      one process's spool, appended to (``O_APPEND``) and read back only when
                       another process adopts it; ``<owner>`` is ``<pid>-<random>``
``<owner>.lock``       held (``flock``, exclusive) by that process while it runs; the kernel drops
                       it when the process ends, however it ends
``dead.jsonl``         calls that cannot run, with the reason (``plait dlq``), under ``dead.lock``
``replay-*.jsonl``     dead calls put back by ``plait dlq replay``, adopted like any spool
=====================  ==========================================================================

A spool file is JSON lines: a call ``{"seq", "id", "lane", "host", "call", "at"}``, and
``{"done": seq}`` once it ran. A line cut short by a crash is skipped. A call is durable once
its line is written: the process can be killed (SIGKILL) and the next process that opens the
project's spool finds it. The disk itself is flushed (``fdatasync``) by :meth:`FileSpool.sync`,
which plait calls about once a second, as the embedded server's append-only file is. When
nothing is pending the file is emptied; a file grown large with few calls pending is rewritten.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from plait.adapters.backends.private_files import FILE_MODE, private_directory, private_file
from plait.state.groups import project_key
from plait.state.ports import DEAD_CALL_DAYS, CallBody, DeadCall, SpooledCall, SpoolStats

SPOOL_DIR = "spool"
DEAD_FILE = "dead.jsonl"
REWRITE_BYTES = 32 * 1024 * 1024


def spool_folder(data_dir: Path, project_dir: Path | str) -> Path:
    """The project's spool folder in the data dir."""
    return Path(data_dir) / SPOOL_DIR / project_key(project_dir)


def entry_line(entry: SpooledCall) -> bytes:
    """One call as a spool line."""
    record = {
        "seq": entry.seq,
        "id": entry.call_id,
        "lane": entry.lane,
        "host": entry.host,
        "call": entry.call,
        "at": entry.accepted_at.timestamp(),
    }
    if entry.member is not None:
        record["member"] = entry.member
    return record_line(record)


def record_line(record: dict[str, Any]) -> bytes:
    """One JSON record as a line of a spool file."""
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a file's lines; a line that does not parse is skipped."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict):
                yield record


def pending_in(path: Path) -> list[SpooledCall]:
    """The calls of a spool file not marked done, in the file's order."""
    calls: OrderedDict[int, SpooledCall] = OrderedDict()
    for record in read_lines(path):
        if isinstance(record.get("done"), int):
            calls.pop(record["done"], None)
            continue
        with contextlib.suppress(KeyError, TypeError, ValueError):
            calls[int(record["seq"])] = SpooledCall(
                seq=int(record["seq"]),
                call_id=str(record.get("id") or ""),
                lane=str(record.get("lane") or ""),
                host=str(record["host"]),
                call=dict(record["call"]),
                accepted_at=datetime.fromtimestamp(float(record.get("at", 0)), UTC),
                member=str(record["member"]) if record.get("member") else None,
            )
    return list(calls.values())


@contextlib.contextmanager
def locked(path: Path, *, wait: bool = True) -> Iterator[IO[Any] | None]:
    """An exclusive ``flock`` on ``path`` for the block; None when not waiting and it is held."""
    handle = private_file(path).open("a+")
    try:
        flags = fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(handle, flags)
        except BlockingIOError:
            yield None
            return
        yield handle
    finally:
        handle.close()


def write_lines(path: Path, lines: Sequence[bytes]) -> None:
    """Replace ``path`` with ``lines`` atomically (mode 0600)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "wb") as handle:
        handle.writelines(lines)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


REPLAY_PREFIX = "replay-"  # a file of replayed dead calls: no process is coming back for it


def _written(path: Path) -> float:
    """When a spool file was last written (0 when it is gone: adopted meanwhile)."""
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


class FileSpool:
    """:class:`~plait.state.ports.CallSpool` and :class:`~plait.state.ports.DeadCalls` in files.

    The files are made on first use: opening a spool touches nothing.
    """

    def __init__(self, folder: Path) -> None:
        """A spool in ``folder`` (see the module)."""
        self.folder = folder
        self.owner = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._descriptor: int | None = None
        self._lock: IO[Any] | None = None
        self._pending: OrderedDict[int, SpooledCall] = OrderedDict()
        self._seq = 0
        self._dirty = False
        self._size = 0

    @classmethod
    def for_project(cls, data_dir: Path, project_dir: Path | str) -> FileSpool:
        """The spool of a project in a data dir."""
        return cls(spool_folder(data_dir, project_dir))

    @property
    def path(self) -> Path:
        """This process's spool file."""
        return self.folder / f"{self.owner}.jsonl"

    # -- the spool ------------------------------------------------------------------------------
    def append(
        self, *, call_id: str, lane: str, host: str, call: CallBody, member: str | None = None
    ) -> SpooledCall:
        """Write one call (one ``write`` of one line); it survives this process from here."""
        self._seq += 1
        entry = SpooledCall(
            seq=self._seq,
            call_id=call_id,
            lane=lane,
            host=host,
            call=call,
            accepted_at=datetime.now(UTC),
            member=member,
        )
        self._write(entry_line(entry))
        self._pending[entry.seq] = entry
        return entry

    def done(self, seq: int) -> None:
        """Mark a call done; an empty spool is emptied, a large one rewritten."""
        if self._pending.pop(seq, None) is None:
            return
        if not self._pending:
            self._truncate()
        elif self._size > REWRITE_BYTES and len(self._pending) * 2 < self._seq:
            self._rewrite()
        else:
            self._write(b'{"done":%d}\n' % seq)

    def pending(self) -> list[SpooledCall]:
        """The calls not done yet, oldest first."""
        return list(self._pending.values())

    def adopt(self, settled_s: float = 0.0) -> list[SpooledCall]:
        """Take over spool files no process holds (and ``plait dlq replay``'s files at once).

        With ``settled_s``, a process's file only once it was last written that long ago.
        """
        if not self.folder.is_dir():
            return []
        adopted: list[SpooledCall] = []
        recent = time.time() - settled_s
        for path in sorted(self.folder.glob("*.jsonl"), key=_written):
            if path.name == DEAD_FILE or path == self.path:
                continue
            if not path.name.startswith(REPLAY_PREFIX) and _written(path) > recent:
                continue  # its process may be back in a moment and take it itself
            adopted += self._adopt_file(path)
        return adopted

    def _adopt_file(self, path: Path) -> list[SpooledCall]:
        lock_file = path.with_suffix(".lock")
        with locked(lock_file, wait=False) as held:
            if held is None or not path.exists():
                return []
            taken = [
                self.append(
                    call_id=c.call_id, lane=c.lane, host=c.host, call=c.call, member=c.member
                )
                for c in pending_in(path)
            ]
            path.unlink()
            lock_file.unlink(missing_ok=True)
        return taken

    def stats(self) -> SpoolStats:
        """Pending calls, the oldest's time, and this spool file's bytes."""
        oldest = next(iter(self._pending.values()), None)
        return SpoolStats(
            pending=len(self._pending),
            oldest=oldest.accepted_at if oldest else None,
            bytes=self._size,
        )

    def sync(self) -> None:
        """``fdatasync`` the spool file if something was written since the last time."""
        if self._descriptor is not None and self._dirty:
            self._dirty = False
            os.fdatasync(self._descriptor)

    def close(self) -> None:
        """Close the file and drop the lock; pending calls stay for the next process."""
        if self._descriptor is not None:
            self.sync()
            os.close(self._descriptor)
            self._descriptor = None
            if not self._pending:
                self.path.unlink(missing_ok=True)
        if self._lock is not None:
            if not self._pending:
                self.path.with_suffix(".lock").unlink(missing_ok=True)
            self._lock.close()
            self._lock = None

    # -- files ----------------------------------------------------------------------------------
    def _open(self) -> int:
        if self._descriptor is None:
            private_directory(self.folder)
            lock = private_file(self.path.with_suffix(".lock")).open("a+")
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._lock = lock
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            self._descriptor = os.open(self.path, flags, FILE_MODE)
            self._size = os.fstat(self._descriptor).st_size
        return self._descriptor

    def _write(self, line: bytes) -> None:
        descriptor = self._open()
        written = os.write(descriptor, line)
        while written < len(line):  # a short write (rare): the rest, in order
            written += os.write(descriptor, line[written:])
        self._size += len(line)
        self._dirty = True

    def _truncate(self) -> None:
        if self._descriptor is not None:
            os.ftruncate(self._descriptor, 0)
            self._size = 0
            self._dirty = True

    def _rewrite(self) -> None:
        lines = [entry_line(entry) for entry in self._pending.values()]
        write_lines(self.path, lines)
        if self._descriptor is not None:
            os.close(self._descriptor)
        self._descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND, FILE_MODE)
        self._size = sum(len(line) for line in lines)

    # -- dead calls -----------------------------------------------------------------------------
    @property
    def dead_path(self) -> Path:
        """The dead calls' file."""
        return self.folder / DEAD_FILE

    def dead_letter_call(
        self, *, call_id: str, host: str, call: CallBody, reason: str, member: str | None = None
    ) -> DeadCall:
        """Append a call that cannot run, with the reason."""
        dead = DeadCall.now(
            dead_id=f"call-{time.time_ns():x}-{secrets.token_hex(2)}",
            call_id=call_id,
            host=host,
            call=call,
            reason=reason,
            member=member,
        )
        record = {
            "dead_id": dead.dead_id,
            "id": call_id,
            "host": host,
            "call": call,
            "reason": dead.reason,
            "at": dead.dead_at.timestamp(),
        }
        if member is not None:
            record["member"] = member
        private_directory(self.folder)
        with locked(self.folder / "dead.lock"), private_file(self.dead_path).open("ab") as out:
            out.write(record_line(record))
        return dead

    def list_dead_calls(self, limit: int = 100) -> list[DeadCall]:
        """Dead calls, oldest first."""
        return self._dead()[:limit]

    def _dead(self) -> list[DeadCall]:
        found = []
        for record in read_lines(self.dead_path):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                found.append(
                    DeadCall(
                        dead_id=str(record["dead_id"]),
                        call_id=str(record.get("id") or ""),
                        host=str(record["host"]),
                        call=dict(record["call"]),
                        reason=str(record.get("reason") or ""),
                        dead_at=datetime.fromtimestamp(float(record.get("at", 0)), UTC),
                        member=str(record["member"]) if record.get("member") else None,
                    )
                )
        return found

    def expire_dead_calls(self) -> int:
        """Drop the dead calls older than :data:`DEAD_CALL_DAYS`; how many."""
        oldest = datetime.now(UTC) - timedelta(days=DEAD_CALL_DAYS)
        records = list(read_lines(self.dead_path))
        kept = [r for r in records if float(r.get("at", 0) or 0) >= oldest.timestamp()]
        if len(kept) < len(records):
            with locked(self.folder / "dead.lock"):
                write_lines(self.dead_path, [record_line(r) for r in kept])
        return len(records) - len(kept)

    def drop_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Delete dead calls (all when None); how many."""
        return len(self._take_dead(dead_ids))

    def replay_dead_calls(self, dead_ids: Sequence[str] | None = None) -> int:
        """Put dead calls into a spool file of their own, which the service adopts and runs."""
        if not self.dead_path.exists():
            return 0
        private_directory(self.folder)
        replay = self.folder / f"{REPLAY_PREFIX}{time.time_ns():x}-{secrets.token_hex(2)}.jsonl"
        with locked(replay.with_suffix(".lock")):
            taken = self._take_dead(dead_ids, keep_in=replay)
        return len(taken)

    def _take_dead(self, dead_ids: Sequence[str] | None, keep_in: Path | None = None) -> list:
        if not self.dead_path.exists():
            return []
        with locked(self.folder / "dead.lock"):
            letters = self._dead()
            wanted = set(dead_ids) if dead_ids is not None else None
            taken = [d for d in letters if wanted is None or d.dead_id in wanted]
            if not taken:
                return []
            if keep_in is not None:
                entries = [
                    SpooledCall(
                        seq=seq,
                        call_id=dead.call_id,
                        lane="",
                        host=dead.host,
                        call=dead.call,
                        accepted_at=datetime.now(UTC),
                        member=dead.member,
                    )
                    for seq, dead in enumerate(taken, start=1)
                ]
                write_lines(keep_in, [entry_line(entry) for entry in entries])
            kept = {d.dead_id for d in taken}
            lines = [
                raw
                for raw, record in self._dead_lines()
                if record is None or record.get("dead_id") not in kept
            ]
            write_lines(self.dead_path, lines)
        return taken

    def _dead_lines(self) -> Iterator[tuple[bytes, dict[str, Any] | None]]:
        for line in self.dead_path.read_bytes().splitlines(keepends=True):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn line: dropped with the rewrite
            yield line, record if isinstance(record, dict) else None


__all__ = ["FileSpool", "spool_folder"]
