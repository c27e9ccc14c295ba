"""Files only for their owner: the data dir 0700, every file plait or its Redis server writes 0600.

Tests cannot switch user, so they assert the modes another local user would be stopped by: no
group or other permission on anything plait keeps.
"""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
from mcp import Client

from plait import Memory
from plait.adapters.backends.embedders import EmbeddingCache
from plait.adapters.backends.private_files import secure_data_dir, write_private
from plait.adapters.hosts.http import load_or_create_token, write_service_file
from plait.adapters.hosts.http.service import ServiceInfo
from plait.adapters.hosts.mcp import build_server


def mode(path: Path) -> int:
    """The permission bits of ``path`` (not following a link)."""
    return stat.S_IMODE(path.lstat().st_mode)


def loose(root: Path) -> list[str]:
    """What under ``root`` (itself included) grants any permission to group or others.

    A file gone between the listing and its check (the server's temporary AOF rewrite) is
    passed over.
    """
    found = []
    for path in [root, *root.rglob("*")]:
        try:
            bits = mode(path)
        except FileNotFoundError:
            continue
        if bits & 0o077:
            found.append(f"{oct(bits)} {path.relative_to(root.parent)}")
    return found


async def test_everything_plait_writes_is_the_owners_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Memory.open(tmp_path, data, start_background=False) as memory:
        await memory.user_turn("s1", "We decided to use Postgres for storage.")
        assert memory.backends.redis is not None
        await memory.backends.redis.bgrewriteaof()
        await memory.backends.redis.save()
        server = build_server(memory, worktree=tmp_path, data_dir=data)
        async with Client(server, mode="legacy") as client:
            await client.call_tool("session_index", {"content": "alpha beta", "source": "notes"})
            wal = [data / "corpus.sqlite3", data / "corpus.sqlite3-wal"]
            assert all(path.exists() for path in wal) and loose(data) == []
        load_or_create_token(data)
        write_service_file(
            data,
            ServiceInfo(
                url="http://127.0.0.1:1", host="127.0.0.1", port=1, pid=1, project_dir=str(tmp_path)
            ),
        )
        await memory.background.drain()  # the recall index takes the turn
        files = {path.name for path in data.rglob("*")}
        assert {"redis.conf", "password", "dump.rdb", "redis.log", "token"} <= files
        assert {"recall.sqlite3", "recall.sqlite3-wal"} <= files
        assert any(name.endswith(".aof") for name in files)
        assert loose(data) == []


async def test_the_redis_password_is_only_in_files_only_the_owner_reads(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Memory.open(tmp_path, data, start_background=False) as memory:
        assert memory.backends.server is not None and memory.backends.server.info is not None
        password = memory.backends.server.info.password.encode()
        holders = [p for p in data.rglob("*") if p.is_file() and password in p.read_bytes()]
    assert {p.name for p in holders} == {"password", "redis.conf"}
    for holder in holders:
        assert mode(holder) == 0o600
        assert all(mode(folder) == 0o700 for folder in holder.parents if data in folder.parents)


async def test_a_loose_data_dir_is_tightened_on_open_and_other_files_are_left(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    falkordb = data / "falkordb"
    (falkordb / "appendonlydir").mkdir(parents=True)
    (data / "outbox").mkdir()
    (data / "services").mkdir()
    planted = {
        falkordb / "appendonlydir" / "appendonly.aof.1.incr.aof": "",
        data / "corpus.sqlite3": "",
        data / "outbox" / "abc.jsonl": '{"name": "event"}\n',
        data / "services" / "abc.json": "{}",
        data / "token": "t0ken\n",
        data / "notes.txt": "not plait's",
    }
    for path, text in planted.items():
        path.write_text(text)
        path.chmod(0o644)
    for folder in (data, falkordb, falkordb / "appendonlydir", data / "outbox", data / "services"):
        folder.chmod(0o755)
    async with Memory.open(tmp_path, data, start_background=False):
        pass
    assert loose(data) == [f"0o644 {Path('data') / 'notes.txt'}"]


def test_write_private_creates_with_the_mode_and_replaces_atomically(tmp_path: Path) -> None:
    target = write_private(tmp_path / "secret.txt", "one")
    assert mode(target) == 0o600 and target.read_text() == "one"
    target.chmod(0o644)
    write_private(target, "two")
    assert mode(target) == 0o600 and target.read_text() == "two"
    assert [path.name for path in tmp_path.iterdir()] == ["secret.txt"]


def test_secure_data_dir_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_text("x")
    (outside / "theirs.txt").chmod(0o644)
    data = tmp_path / "data"
    data.mkdir()
    (data / "falkordb").symlink_to(outside)
    secure_data_dir(data)
    assert mode(outside / "theirs.txt") == 0o644 and mode(data) == 0o700


def test_the_embedding_cache_is_the_owners_alone(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache" / "plait" / "embeddings.sqlite3")
    cache.put({b"key": np.ones(4, dtype=np.float32)})
    assert cache.get([b"key"])
    assert loose(tmp_path / "cache" / "plait") == []  # ~/.cache itself is not plait's
