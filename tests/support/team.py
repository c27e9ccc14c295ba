"""A team of two for a service a team shares: alice and bob, with tokens made as ``plait token
create --all-projects`` makes them, in a real token book (``<data_dir>/tokens.json``)."""

from __future__ import annotations

from pathlib import Path

from plait.adapters.backends.tokens import FileTokenBook
from plait.adapters.hosts.http.team import TeamTokens
from plait.state.tokens import ALL_PROJECTS

MEMBERS = ("alice", "bob")


def team(data_dir: Path, project_key: str = "p") -> tuple[TeamTokens, dict[str, str]]:
    """The tokens a service of ``project_key`` admits beside its owner's, and each member's."""
    book = FileTokenBook(data_dir)
    tokens = {user: book.create(user, projects=(ALL_PROJECTS,))[0] for user in MEMBERS}
    return TeamTokens(book.judge, project_key), tokens


__all__ = ["MEMBERS", "team"]
