"""One contract suite over both spools (files, memory), and what only the file spool promises:
a call written is kept when its process is killed, and the next process adopts it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plait.adapters.backends import memory_spool as memory_spool_module
from plait.adapters.backends import spool as spool_module
from plait.adapters.backends.memory_spool import InMemorySpool
from plait.adapters.backends.spool import FileSpool
from plait.state.ports import CallSpool, DeadCalls

CALL = {"name": "x", "input": {"text": "caf\u00e9 \U0001f600"}, "output": {}}


@pytest.fixture(params=["file", "memory"])
def spool(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FileSpool | InMemorySpool]:
    made = FileSpool(tmp_path / "spool") if request.param == "file" else InMemorySpool()
    yield made
    made.close()


def test_both_spools_satisfy_the_ports(tmp_path: Path) -> None:
    for spool in (FileSpool(tmp_path), InMemorySpool()):
        assert isinstance(spool, CallSpool) and isinstance(spool, DeadCalls)


def test_spool_keeps_calls_in_order_until_done(spool: CallSpool) -> None:
    first = spool.append(call_id="a", lane="s1", host="h", call=CALL)
    second = spool.append(call_id="b", lane="s2", host="h", call={"n": 2})
    assert [c.call_id for c in spool.pending()] == ["a", "b"]
    assert spool.pending()[0].call == CALL and first.seq < second.seq
    assert spool.stats().pending == 2 and spool.stats().oldest == first.accepted_at
    spool.done(first.seq)
    spool.done(first.seq)  # twice is harmless
    assert [c.call_id for c in spool.pending()] == ["b"]
    spool.done(second.seq)
    assert spool.pending() == [] and spool.stats().pending == 0


def test_dead_calls_are_listed_dropped_and_replayed(spool: FileSpool | InMemorySpool) -> None:
    one = spool.dead_letter_call(
        call_id="a", host="h", call=CALL, reason="bad field input.x", member="alice"
    )
    two = spool.dead_letter_call(call_id="b", host="h", call={"n": 2}, reason="too large")
    assert [d.member for d in spool.list_dead_calls()] == ["alice", None]
    assert [(d.call_id, d.reason) for d in spool.list_dead_calls()] == [
        ("a", "bad field input.x"),
        ("b", "too large"),
    ]
    assert spool.drop_dead_calls([two.dead_id]) == 1
    assert spool.replay_dead_calls([one.dead_id, "nope"]) == 1
    assert spool.list_dead_calls() == []
    adopted = spool.adopt()
    assert [(c.call_id, c.call) for c in adopted] == [("a", CALL)]
    assert adopted[0].member == "alice"  # a replay runs as the member whose call it was
    assert [c.call_id for c in spool.pending()] == ["a"]


def test_dead_calls_expire_after_their_time(
    spool: FileSpool | InMemorySpool, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool.dead_letter_call(call_id="a", host="h", call=CALL, reason="bad")
    assert spool.expire_dead_calls() == 0 and len(spool.list_dead_calls()) == 1
    for module in (spool_module, memory_spool_module):  # every dead call is past its time now
        monkeypatch.setattr(module, "DEAD_CALL_DAYS", -1)
    assert spool.expire_dead_calls() == 1
    assert spool.list_dead_calls() == []


def test_file_spool_empties_its_file_once_nothing_is_pending(tmp_path: Path) -> None:
    spool = FileSpool(tmp_path)
    entries = [spool.append(call_id=str(n), lane="", host="h", call=CALL) for n in range(3)]
    for entry in entries:
        spool.done(entry.seq)
    assert spool.path.stat().st_size == 0
    spool.close()
    assert list(tmp_path.glob("*.jsonl")) == []


WRITER = """
import sys, time
from pathlib import Path
from plait.adapters.backends.spool import FileSpool
spool = FileSpool(Path(sys.argv[1]))
for n in range(5):
    entry = spool.append(call_id=f"c{n}", lane="s", host="h", call={"n": n}, member="alice")
    if n < 2:
        spool.done(entry.seq)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_killed_process_leaves_its_calls_for_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "spool"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        alive = FileSpool(folder)
        assert alive.adopt() == []  # its owner still holds it
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        adopted = alive.adopt()
        assert [c.call_id for c in adopted] == ["c2", "c3", "c4"]
        assert [c.call for c in alive.pending()] == [{"n": 2}, {"n": 3}, {"n": 4}]
        assert {c.member for c in adopted} == {"alice"}  # whose call it is survives the process
        assert FileSpool(folder).adopt() == []  # adopted once
        files = {p.name for p in folder.iterdir()}
        assert files == {alive.path.name, alive.path.with_suffix(".lock").name}
        alive.close()
    finally:
        writer.kill()


def test_a_spool_left_moments_ago_waits_for_its_process_but_a_replay_does_not(
    tmp_path: Path,
) -> None:
    """A live process takes another's spool only once it settled (a restarted replica takes its
    own first, in order); replayed dead calls are taken at once."""
    folder = tmp_path / "spool"
    folder.mkdir()
    line = {"seq": 1, "id": "a", "lane": "s", "host": "h", "call": {"n": 1}, "at": 0}
    left = folder / "4242-abcd.jsonl"
    left.write_text(json.dumps(line) + "\n")
    replay = folder / "replay-1-ab.jsonl"
    replay.write_text(json.dumps({**line, "id": "r"}) + "\n")
    spool = FileSpool(folder)
    assert [c.call_id for c in spool.adopt(settled_s=30)] == ["r"]
    old = time.time() - 31
    os.utime(left, (old, old))
    assert [c.call_id for c in spool.adopt(settled_s=30)] == ["a"]
    spool.close()


def test_file_spool_skips_a_line_cut_short(tmp_path: Path) -> None:
    folder = tmp_path / "spool"
    folder.mkdir()
    good = {"seq": 1, "id": "a", "lane": "", "host": "h", "call": {"n": 1}, "at": 0}
    (folder / "old.jsonl").write_text(json.dumps(good) + '\n{"seq": 2, "id": "b", "ca')
    assert [c.call_id for c in FileSpool(folder).adopt()] == ["a"]


def test_file_spool_files_are_private(tmp_path: Path) -> None:
    spool = FileSpool(tmp_path / "spool")
    spool.append(call_id="a", lane="", host="h", call=CALL)
    spool.dead_letter_call(call_id="b", host="h", call=CALL, reason="r")
    assert (tmp_path / "spool").stat().st_mode & 0o777 == 0o700
    written = list((tmp_path / "spool").rglob("*"))
    journals = [path for path in written if path.is_file() and path.suffix == ".jsonl"]
    assert len(journals) >= 2, written  # the call's and the dead letter's, or the loop is empty
    for path in (tmp_path / "spool").iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path
    spool.close()
