"""What the host tests share: a ``plait`` command's environment, a model mock and a project.

A command host's end-to-end module names its pinned CLI with a ``host_bin`` fixture, says how its mock model answers
with ``model_mock()`` and defines its ``Project`` (a :class:`support.hosts.HostProject`); the
fixtures here make one of each per test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hosts import HostProject
from support.model_mocks import ModelMock
from support.plait_cli import plait_env


@pytest.fixture
def env(tmp_path: Path, redis_url: str) -> dict[str, str]:
    """The environment a ``plait`` command runs in: its own data dir, the test's Redis."""
    return plait_env(tmp_path / "data", PLAIT_REDIS__URL=redis_url)


@pytest.fixture
def host_model(request: pytest.FixtureRequest) -> Iterator[ModelMock]:
    """The module's mock model, answering."""
    with request.module.model_mock() as mock:
        yield mock


@pytest.fixture
def host_project(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    redis_url: str,
    host_model: ModelMock,
    host_bin: Path,
) -> Iterator[HostProject]:
    """The module's project with plait installed, its services ended afterwards."""
    with request.module.Project(tmp_path, redis_url, host_model.url, host_bin) as made:
        yield made
