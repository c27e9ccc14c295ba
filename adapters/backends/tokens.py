"""The per-user tokens of one data dir, kept in ``<data_dir>/tokens.json`` (mode 0600).

Each write replaces the file atomically; a running service reads it again when it changed, so a
token made or revoked with ``plait token`` counts from the next request on.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from plait.adapters.backends.private_files import private_directory, write_private
from plait.state.base.errors import ConfigError, UsageError
from plait.state.tokens import TokenRecord, Verdict, judge, make_record, new_token

TOKENS_FILE = "tokens.json"
_RECORDS = TypeAdapter(list[TokenRecord])


class FileTokenBook:
    """The tokens of a data dir: make, list, revoke, and judge a presented one."""

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / TOKENS_FILE
        self._seen: tuple[float, int] | None = None
        self._records: list[TokenRecord] = []

    def records(self) -> list[TokenRecord]:
        """Every token kept, revoked ones included (read again when the file changed)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._seen, self._records = None, []
            return []
        seen = (stat.st_mtime, stat.st_size)
        if seen != self._seen:
            self._records, self._seen = self._read(), seen
        return list(self._records)

    def _read(self) -> list[TokenRecord]:
        try:
            return _RECORDS.validate_python(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError) as error:
            reason = str(error).splitlines()[0]
            raise ConfigError(f"{str(self.path)!r} is not a plait token file: {reason}") from None

    def _write(self, records: list[TokenRecord]) -> None:
        private_directory(self.path.parent)
        write_private(self.path, _RECORDS.dump_json(records, indent=2).decode() + "\n")
        self._seen = None

    def create(
        self, user: str, *, projects: tuple[str, ...] = (), rate_per_minute: int = 600
    ) -> tuple[str, TokenRecord]:
        """A new token for ``user`` and its record; the token is not kept, only its digest."""
        if not user.strip():
            raise UsageError("a token needs a user name (--user)")
        token = new_token()
        record = make_record(
            token, user=user.strip(), projects=projects, rate_per_minute=rate_per_minute
        )
        self._write([*self.records(), record])
        return token, record

    def revoke(self, token_id: str) -> TokenRecord:
        """Revoke the token with this id; an unknown id is a :class:`UsageError`."""
        records = self.records()
        found = next((r for r in records if r.id == token_id), None)
        if found is None:
            raise UsageError(f"no token {token_id!r} (plait token list shows them)")
        if found.revoked_at is not None:
            return found
        revoked = found.model_copy(update={"revoked_at": datetime.now(UTC)})
        self._write([revoked if r.id == token_id else r for r in records])
        return revoked

    def judge(self, token: str, project_key: str) -> tuple[Verdict, TokenRecord | None]:
        """The verdict on a presented token for a project."""
        return judge(self.records(), token, project_key)


__all__ = ["TOKENS_FILE", "FileTokenBook"]
