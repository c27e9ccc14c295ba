"""The token file of a data dir: private, digests only, revocation seen by a running reader."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from plait.adapters.backends.tokens import TOKENS_FILE, FileTokenBook
from plait.state.base.errors import ConfigError, UsageError
from plait.state.tokens import Verdict


def test_tokens_are_kept_hashed_in_a_private_file(tmp_path: Path) -> None:
    book = FileTokenBook(tmp_path / "data")
    token, record = book.create("alice", projects=("p1",), rate_per_minute=10)
    path = tmp_path / "data" / TOKENS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    kept = path.read_text()
    assert token not in kept and record.digest in kept
    assert [r.id for r in FileTokenBook(tmp_path / "data").records()] == [record.id]


def test_a_revocation_reaches_a_reader_that_is_already_open(tmp_path: Path) -> None:
    service_side, cli_side = FileTokenBook(tmp_path), FileTokenBook(tmp_path)
    token, record = cli_side.create("alice", projects=("p1",))
    assert service_side.judge(token, "p1")[0] is Verdict.ADMITTED
    cli_side.revoke(record.id)
    assert service_side.judge(token, "p1")[0] is Verdict.REVOKED


def test_an_unknown_id_or_a_missing_user_is_a_clear_error(tmp_path: Path) -> None:
    book = FileTokenBook(tmp_path)
    with pytest.raises(UsageError, match="no token 'tok_nope'"):
        book.revoke("tok_nope")
    with pytest.raises(UsageError, match="needs a user"):
        book.create("  ")


def test_a_broken_token_file_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / TOKENS_FILE).write_text("{not json")
    book = FileTokenBook(tmp_path)
    with pytest.raises(ConfigError, match=TOKENS_FILE):
        book.records()
    with pytest.raises(ConfigError):
        book.create("alice")
    assert (tmp_path / TOKENS_FILE).read_text() == "{not json"
    (tmp_path / TOKENS_FILE).write_text(json.dumps([]))
    assert book.records() == []
