"""Standby answers on disk: kept, served, and not written again when nothing changed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from plait.state.base.standby import answer_path, drop_answers, keep_answer, standby_answer


def test_an_unchanged_answer_is_not_written_again_and_a_changed_or_dropped_one_is(
    tmp_path: Path,
) -> None:
    data = str(tmp_path)
    keep_answer(data, "p1", "codex", "s1", "UserPromptSubmit", b'{"a": 1}', project_wide=True)
    path = answer_path(data, "p1", "codex", "s1", "UserPromptSubmit")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.utime(path, ns=(1, os.stat(path).st_mtime_ns - 10**9))  # a second older, as if earlier
    written = os.stat(path).st_mtime_ns
    keep_answer(data, "p1", "codex", "s1", "UserPromptSubmit", b'{"a": 1}')
    assert os.stat(path).st_mtime_ns != written  # not the file this process wrote: written again
    written = os.stat(path).st_mtime_ns
    keep_answer(data, "p1", "codex", "s1", "UserPromptSubmit", b'{"a": 1}')
    assert os.stat(path).st_mtime_ns == written  # the same answer: no write
    keep_answer(data, "p1", "codex", "s1", "UserPromptSubmit", b'{"a": 2}')
    assert standby_answer(data, "p1", "codex", "s1", "UserPromptSubmit") == b'{"a": 2}'
    drop_answers(data, "p1")  # forgetting removes them: the same answer is written again
    keep_answer(data, "p1", "codex", "s1", "UserPromptSubmit", b'{"a": 2}')
    assert standby_answer(data, "p1", "codex", "s1", "UserPromptSubmit") == b'{"a": 2}'
    assert standby_answer(data, "p1", "codex", "new", "UserPromptSubmit") == b""
