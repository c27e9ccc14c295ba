"""The plugin's outbox, sent by the service when no plugin is left to send it.

The OpenCode plugin keeps what the service could not take in ``<data_dir>/outbox/<key>.jsonl``
and sends it later (``plait.ts``). What it wrote as OpenCode exited (events still in flight, a
session's last ``session.idle``) would wait for the next OpenCode run of the project, days
maybe. So ``plait serve`` looks at the outbox of the project it serves every
:data:`LOOK_EVERY_S` and, once the outbox has not changed for :data:`LEFT_AFTER_S` and no
plugin holds its lock, sends it itself, the plugin's way: the lock (``<outbox>.lock``, taken
with O_EXCL; a lock :data:`LOCK_STALE_S` old is a dead holder's), the outbox moved to
``<outbox>.sending``, the calls run in order, and the file rewritten whole with what is left
after each batch. A call is done when it ran or was refused for good (4xx, dead-lettered); at
the first that was not kept (5xx) the rest stay for the next look. Lines kept for another
replica (``to``) are left to the plugins.

The plugin seals each call's name and payload (AES-256-GCM, the call id as associated data)
with the key in ``<data_dir>/outbox/sealing.key``: a payload holds what the user typed and tools
printed, and plait's redaction runs here, not in the plugin. :func:`unsealed` opens a line with
that key; a line written before sealing is read as it is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from plait.state.base.redact import redacted_logger
from plait.state.groups import project_key

logger = redacted_logger("plait")

LOOK_EVERY_S = 2.0
LEFT_AFTER_S = 3.0
LOCK_STALE_S = 30.0
BATCH = 200
SEALING_KEY = "sealing.key"
NONCE_BYTES = 12

RunCall = Callable[[Any], Awaitable[int]]  # one outbox call → the status it got


def outbox_path(data_dir: Path, project_dir: Path) -> Path:
    """Where the plugin keeps a project's outbox."""
    return data_dir / "outbox" / f"{project_key(project_dir)}.jsonl"


def left_alone(path: Path, now: float) -> bool:
    """Whether the outbox holds calls and nothing wrote to it for :data:`LEFT_AFTER_S`."""
    times = [p.stat().st_mtime for p in (path, sending_of(path)) if p.exists()]
    return bool(times) and now - max(times) >= LEFT_AFTER_S


def sending_of(path: Path) -> Path:
    """The batch being sent."""
    return path.with_name(path.name + ".sending")


@contextlib.contextmanager
def outbox_lock(path: Path) -> Iterator[bool]:
    """The outbox's lock, as the plugins take it: True when this process holds it."""
    lock = path.with_name(path.name + ".lock")
    token = uuid.uuid4().hex
    with contextlib.suppress(OSError):
        if time.time() - lock.stat().st_mtime > LOCK_STALE_S:
            lock.unlink()  # its holder died
    try:
        descriptor = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        yield False
        return
    with os.fdopen(descriptor, "w") as handle:
        handle.write(token)
    try:
        yield True
    finally:
        with contextlib.suppress(OSError):
            if lock.read_text() == token:
                lock.unlink()


def rewrite(path: Path, lines: list[str]) -> None:
    """The batch file with what is left, written whole (a plugin reading it sees all or none)."""
    spare = path.with_name(path.name + ".tmp")
    spare.write_text("".join(line + "\n" for line in lines))
    spare.chmod(0o600)
    spare.replace(path)


async def send_left_outbox(path: Path, run: RunCall) -> int:
    """Send an outbox its plugins left (see the module); how many calls are done with."""
    if not left_alone(path, time.time()):
        return 0
    with outbox_lock(path) as held:
        if not held:
            return 0
        sending = sending_of(path)
        if not sending.exists():
            if not path.exists():
                return 0
            path.replace(sending)  # first: what a plugin appends from now on goes to a new outbox
        lines = [line for line in sending.read_text(errors="replace").splitlines() if line]
        if any(is_for_a_replica(line) for line in lines):
            return 0  # the plugins send the batch file too
        key = sealing_key(path)
        done = 0
        while lines:
            batch = lines[:BATCH]
            statuses = await asyncio.gather(*(run(unsealed(parsed(line), key)) for line in batch))
            settled = next((n for n, status in enumerate(statuses) if status >= 500), len(batch))
            done += settled
            lines = lines[settled:]
            rewrite(sending, lines)
            if settled < len(batch):
                break
        if not lines:
            sending.unlink()
        if done:
            logger.info("plait: sent %d call(s) OpenCode left in its outbox", done)
        return done


def parsed(line: str) -> Any:
    """One outbox line as a call (a line that is not JSON is refused by the batch's checks)."""
    try:
        return json.loads(line)
    except ValueError:
        return {"line": line[:200]}


def sealing_key(path: Path) -> bytes | None:
    """The key the plugins seal the outbox ``path``'s calls with, or None when there is none."""
    try:
        key = base64.b64decode((path.parent / SEALING_KEY).read_text().strip(), validate=True)
    except (OSError, ValueError):
        return None
    return key if len(key) == 32 else None


def unsealed(call: Any, key: bytes | None) -> Any:
    """A sealed outbox call opened with ``key``, as the plugin kept it; any other as it is.

    A call the key cannot open keeps only its id, and the service refuses it (dead-lettered).
    """
    if not isinstance(call, dict) or "sealed" not in call:
        return call
    call_id = str(call.get("call_id", ""))
    try:
        raw = base64.b64decode(str(call["sealed"]), validate=True)
        if key is None:
            raise ValueError("no sealing key")
        text = AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], call_id.encode())
        opened = json.loads(text)
    except (ValueError, InvalidTag):  # base64's and JSON's errors are ValueErrors
        return {"call_id": call_id, "line": "sealed, and the outbox's key cannot open it"}
    if not isinstance(opened, dict):
        return {"call_id": call_id, "line": "sealed, and not a call"}
    return opened | {name: call[name] for name in ("call_id", "to") if name in call}


def read_calls(path: Path) -> list[Any]:
    """The calls waiting in the outbox ``path`` and its batch being sent, opened, in order."""
    key = sealing_key(path)
    files = [file for file in (sending_of(path), path) if file.exists()]
    lines = [line for file in files for line in file.read_text(errors="replace").splitlines()]
    return [unsealed(parsed(line), key) for line in lines if line]


def is_for_a_replica(line: str) -> bool:
    """Whether a line was kept for one replica of several (its plugin sends it there)."""
    call = parsed(line)
    return isinstance(call, dict) and bool(call.get("to"))


async def watch_left_outbox(path: Path, run: RunCall) -> None:
    """Look at the outbox every :data:`LOOK_EVERY_S` for as long as the service runs."""
    while True:
        await asyncio.sleep(LOOK_EVERY_S)
        try:
            await send_left_outbox(path, run)
        except OSError as error:
            logger.warning("plait: the outbox OpenCode left cannot be sent: %s", error)


__all__ = [
    "outbox_path",
    "read_calls",
    "send_left_outbox",
    "sending_of",
    "sealing_key",
    "unsealed",
    "watch_left_outbox",
]
