"""The shared process's control routes, in process: who may add a project, and what it answers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
from support.plait_cli import service_info

from plait.adapters.hosts.http import write_service_file
from plait.adapters.hosts.http.lifecycle import ServiceLock
from plait.adapters.hosts.http.user_service import UserService, settings_environment


async def test_the_control_adds_a_project_for_the_owner_only(tmp_path: Path) -> None:
    served: list[Path] = []

    async def serve_project(project: Path, stop: asyncio.Event, lock: ServiceLock | None) -> None:
        served.append(project)
        info = service_info(project)
        write_service_file(tmp_path, info)
        await stop.wait()

    service = UserService(tmp_path, "owner-token", serve_project)
    transport = httpx.ASGITransport(app=service.control_app())
    owner = {"authorization": "Bearer owner-token"}
    async with httpx.AsyncClient(transport=transport, base_url="http://control") as client:
        body = {"project_dir": str(tmp_path / "p"), "environment": settings_environment()}
        refused = await client.post("/v1/projects", json=body, headers={"authorization": "x"})
        assert refused.status_code == 403 and served == []
        broken = await client.post("/v1/projects", content=b"{not json", headers=owner)
        assert broken.status_code == 400
        other = {**body, "environment": "a digest of other settings"}
        assert (await client.post("/v1/projects", json=other, headers=owner)).status_code == 409
        added = await client.post("/v1/projects", json=body, headers=owner)
        assert added.status_code == 200 and added.json()["project_dir"] == str(tmp_path / "p")
        again = await client.post("/v1/projects", json=body, headers=owner)
        assert again.status_code == 200 and served == [tmp_path / "p"]  # served once
        health = (await client.get("/v1/health")).json()
        assert health["pid"] == os.getpid() and len(health["projects"]) == 1
        stop = await client.post("/v1/projects/stop", json={"key": "nope"}, headers=owner)
        assert stop.json() == {"stopped": False}
        key = health["projects"][0]
        stop = await client.post("/v1/projects/stop", json={"key": key}, headers=owner)
        assert stop.json() == {"stopped": True}
    await asyncio.wait_for(service.projects[key].task, 5)
