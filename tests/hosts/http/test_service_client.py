"""``plait.connect``: a builder's Python reaches a shared service's memory with a URL and a token."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.command_hooks import running
from support.local_web import free_port

import plait
from plait.adapters.hosts.http import read_service_file
from plait.state.base.errors import BackendUnavailable, ConfigError, UsageError
from plait.state.observations import UnknownObservation


async def test_connect_saves_searches_and_forgets_on_the_service(
    tmp_path: Path, redis_url: str
) -> None:
    async with running(tmp_path, redis_url) as memory:
        live = read_service_file(tmp_path / "data", tmp_path / "project")
        assert live is not None
        token = (tmp_path / "data" / "token").read_text().strip()
        dead = f"http://127.0.0.1:{free_port()}"
        async with plait.connect(f"{dead}, {live.url}", token) as team:  # a dead replica first
            saved = await team.save("Ledger rounding", "Round half-even.", type="decision")
            assert (await memory.observations.get(saved["id"])).title == "Ledger rounding"
            found = await team.search("ledger rounding")
            assert found["results"][0]["id"] == saved["id"]
            assert (await team.get(saved["id"]))["content"] == "Round half-even."
            await team.delete(saved["id"])
            with pytest.raises(UnknownObservation, match=saved["id"]):
                await team.get(saved["id"])
            with pytest.raises(UsageError, match="type"):
                await team.save("x", "y", type="not-a-type")
        async with plait.connect(live.url, "not-the-token") as stranger:
            with pytest.raises(ConfigError, match="refused the token"):
                await stranger.search("ledger")
    async with plait.connect(dead, token) as gone:
        with pytest.raises(BackendUnavailable, match="nothing was done"):
            await gone.save("x", "y")


def test_connect_without_a_url_or_token_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLAIT_URL", raising=False)
    monkeypatch.delenv("PLAIT_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="url"):
        plait.connect()
    with pytest.raises(ConfigError, match="token"):
        plait.connect("http://127.0.0.1:1")
