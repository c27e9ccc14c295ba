"""Standby answers: the last memory a command-hook host got, kept for when no service answers.

``plait serve`` keeps, for each command-hook host, session and event, the last non-empty answer
it gave (the host's own JSON: context for the model), and for each host and event the last
answer to a new session's start, the project's part of memory (``<persistent_memory>``, the
brief). When the hook client finds no service (a project's first call after ``plait stop``,
idle exit or a crash), it answers with the session's standby answer for that event, else the
project's, while the service starts: the model call still carries memory, at most one call old.

Files: ``<data_dir>/answers/<project_key>/<digest>.json`` (0600, folders 0700), replaced
atomically; an answer older than :data:`MAX_AGE_S` is not served. Forgetting anything removes
the project's folder (:func:`drop_answers`): no standby answer outlives what it said.
Standard library only: the hook client reads it on its way.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time

ANSWERS_DIR = "answers"
MAX_AGE_S = 7 * 24 * 3600
ANSWER_MAX_BYTES = 256 * 1024
# What this process last wrote to each answer file: (the file's mtime_ns, the body's digest). An
# answer kept again unchanged (the model calls of one turn) is not written again while the file
# is still the one written and younger than REWRITE_AFTER_S (so it never ages out of MAX_AGE_S).
_WRITTEN: dict[str, tuple[int, bytes]] = {}
WRITTEN_MAX = 4096
REWRITE_AFTER_S = 3600


def answers_dir(data_dir: str, project_key: str) -> str:
    """The project's folder of standby answers."""
    return os.path.join(data_dir, ANSWERS_DIR, project_key)


def answer_path(data_dir: str, project_key: str, host: str, session: str, event: str) -> str:
    """One answer's file (``session`` "" for the project's)."""
    digest = hashlib.sha256(f"{host}\n{session}\n{event}".encode()).hexdigest()[:32]
    return os.path.join(answers_dir(data_dir, project_key), f"{digest}.json")


def keep_answer(
    data_dir: str,
    project_key: str,
    host: str,
    session: str,
    event: str,
    body: bytes,
    *,
    project_wide: bool = False,
) -> None:
    """Keep ``body`` as the session's (and, ``project_wide``, the project's) standby answer."""
    if not body.strip() or body.strip() == b"{}" or len(body) > ANSWER_MAX_BYTES:
        return
    folder = answers_dir(data_dir, project_key)
    for directory in (os.path.join(data_dir, ANSWERS_DIR), folder):
        with contextlib.suppress(FileExistsError):
            os.makedirs(directory, mode=0o700)
    digest = hashlib.blake2b(body, digest_size=16).digest()
    for who in (session, "") if project_wide else (session,):
        path = answer_path(data_dir, project_key, host, who, event)
        if unchanged(path, digest):
            continue
        temporary = f"{path}.{os.getpid()}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(descriptor, body)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
        if len(_WRITTEN) >= WRITTEN_MAX:
            _WRITTEN.clear()
        _WRITTEN[path] = (os.stat(path).st_mtime_ns, digest)


def unchanged(path: str, digest: bytes) -> bool:
    """Whether ``path`` still holds what this process wrote there, with this digest, lately."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    fresh = time.time() - found.st_mtime < REWRITE_AFTER_S
    return fresh and _WRITTEN.get(path) == (found.st_mtime_ns, digest)


def standby_answer(
    data_dir: str, project_key: str, host: str, session: str, event: str, *, project: bool = True
) -> bytes:
    """The session's standby answer for the event, else the project's; b"" when none is fresh.

    ``project`` False: the session's only (a team member's call: the project's is the owner's).
    """
    for who in (session, "") if project else (session,):
        path = answer_path(data_dir, project_key, host, who, event)
        try:
            if time.time() - os.stat(path).st_mtime > MAX_AGE_S:
                continue
            with open(path, "rb") as handle:
                return handle.read(ANSWER_MAX_BYTES)
        except OSError:
            continue
    return b""


def drop_answers(data_dir: str, project_key: str) -> None:
    """Remove every standby answer of the project (after anything was forgotten)."""
    import shutil  # here only: the hook client imports this module on its way

    shutil.rmtree(answers_dir(data_dir, project_key), ignore_errors=True)


__all__ = [
    "ANSWERS_DIR",
    "MAX_AGE_S",
    "answer_path",
    "drop_answers",
    "keep_answer",
    "standby_answer",
]
