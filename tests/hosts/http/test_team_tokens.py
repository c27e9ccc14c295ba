"""A service a team shares: a real ``plait serve`` admits each user's token for its own project.

Tokens are made and revoked with the CLI (``plait token``) while the service runs; the service
reads the token file again when it changes. The owner's token still opens everything; another
project's token is 403, an unknown or revoked one 401, one over its rate 429 with Retry-After.
Beyond loopback the service refuses to start without TLS or a proxy in front.
"""

from __future__ import annotations

import json
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from support.certificates import self_signed
from support.plait_cli import PLAIT, plait_env, run_plait, start_serve

from plait.adapters.hosts.http import service_file
from plait.wiring import project_prefix


def idle(session: str) -> dict[str, object]:
    event = {"type": "session.idle", "properties": {"sessionID": session}}
    return {"input": {"event": event}, "output": {}}


pytestmark = pytest.mark.slow


@pytest.fixture
def env(tmp_path: Path, redis_url: str) -> dict[str, str]:
    xdg = str(tmp_path / "xdg")
    return plait_env(tmp_path / "data", PLAIT_REDIS__URL=redis_url, XDG_CONFIG_HOME=xdg)


@pytest.fixture
def service(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[Path, str]]:
    """A running ``plait serve`` for a project: the project and the service's URL."""
    project = tmp_path / "project"
    project.mkdir()
    process, url = start_serve(project, env)
    try:
        yield project, url
    finally:
        process.terminate()
        process.wait(timeout=30)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PLAIT, *args], env=env, capture_output=True, text=True, timeout=60)


def post(url: str, token: str, session: str = "s1") -> httpx.Response:
    """A session's idle event (each user's session is theirs alone: see plait.owners)."""
    headers = {"authorization": f"Bearer {token}"}
    return httpx.post(f"{url}/v1/hooks/event", json=idle(session), headers=headers, timeout=30)


def test_each_users_token_opens_only_its_project_until_revoked(
    service: tuple[Path, str], env: dict[str, str], tmp_path: Path
) -> None:
    project, url = service
    other = tmp_path / "other"
    other.mkdir()
    made = cli(env, "token", "create", "--user", "alice", "--project", str(project), "--json")
    assert made.returncode == 0, made.stderr
    alice = json.loads(made.stdout)
    elsewhere = cli(env, "token", "create", "--user", "bob", "--project", str(other), "--json")
    bob = json.loads(elsewhere.stdout)
    owner = (tmp_path / "data" / "token").read_text().strip()

    assert post(url, owner).status_code == 200
    assert post(url, alice["token"], "s2").status_code == 200
    refused = post(url, bob["token"], "s3")
    assert refused.status_code == 403 and "project" in refused.json()["detail"]
    assert post(url, "plait_" + "x" * 43).status_code == 401

    listed = cli(env, "token", "list", "--json")
    assert {row["user"] for row in json.loads(listed.stdout)} == {"alice", "bob"}
    assert (
        alice["token"] not in listed.stdout
        and alice["token"] not in (tmp_path / "data" / "tokens.json").read_text()
    )

    revoked = cli(env, "token", "revoke", alice["id"])
    assert revoked.returncode == 0, revoked.stderr
    gone = post(url, alice["token"], "s2")
    assert gone.status_code == 401 and "revoked" in gone.json()["detail"]
    assert post(url, owner).status_code == 200
    unknown = cli(env, "token", "revoke", "tok_nope")
    assert unknown.returncode == 2 and "no token 'tok_nope'" in unknown.stderr


def test_a_token_over_its_rate_is_told_when_to_come_back(
    service: tuple[Path, str], env: dict[str, str]
) -> None:
    project, url = service
    made = cli(
        env, "token", "create", "--user", "ci", "--project", str(project), "--rate", "2", "--json"
    )
    token = json.loads(made.stdout)["token"]
    statuses = [post(url, token).status_code for _ in range(3)]
    assert statuses[:2] == [200, 200] and statuses[2] == 429
    limited = post(url, token)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1


def test_beyond_loopback_the_service_needs_tls_or_a_proxy(
    tmp_path: Path, env: dict[str, str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    refused = run_plait(env, "serve", "--project", str(project), "--host", "0.0.0.0")
    assert refused.returncode != 0
    assert "tls_cert" in refused.stderr and "behind_proxy" in refused.stderr
    assert not service_file(tmp_path / "data", project).exists()


def test_with_a_certificate_the_service_speaks_https(tmp_path: Path, env: dict[str, str]) -> None:
    cert, key = self_signed(tmp_path)
    tls_env = {**env, "PLAIT_SERVICE__TLS_CERT": str(cert), "PLAIT_SERVICE__TLS_KEY": str(key)}
    project = tmp_path / "project"
    project.mkdir()
    process, url = start_serve(project, tls_env)
    try:
        assert url.startswith("https://127.0.0.1:")
        owner = (tmp_path / "data" / "token").read_text().strip()
        answer = httpx.post(
            f"{url}/v1/hooks/event",
            json=idle("s1"),
            headers={"authorization": f"Bearer {owner}"},
            verify=ssl.create_default_context(cafile=str(cert)),
            timeout=30,
        )
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


def tool(url: str, token: str, name: str, **arguments: object) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"}
    return httpx.post(f"{url}/v1/memory/{name}", json=arguments, headers=headers, timeout=30)


def test_personal_memory_is_its_owners_alone(
    service: tuple[Path, str], env: dict[str, str], tmp_path: Path
) -> None:
    """Two members of one project: what one saves as personal, the other (and the service's
    owner) can neither find nor read nor delete; what one saves for the project, both see."""
    project, url = service
    tokens = {}
    for user in ("alice", "bob"):
        made = cli(env, "token", "create", "--user", user, "--project", str(project), "--json")
        tokens[user] = json.loads(made.stdout)["token"]
    owner = (tmp_path / "data" / "token").read_text().strip()
    mine = tool(
        url,
        tokens["alice"],
        "memory_save",
        title="Alice's editor",
        content="I prefer tabs over spaces in every file I write.",
        type="preference",
        scope="personal",
    )
    assert mine.status_code == 200, mine.text
    mine_id = mine.json()["id"]
    shared = tool(
        url,
        tokens["alice"],
        "memory_save",
        title="Ledger database",
        content="We decided the ledger uses Postgres.",
        type="decision",
    )
    assert shared.status_code == 200, shared.text

    def found(token: str, query: str) -> set[str]:
        answer = tool(url, token, "memory_search", query=query)
        assert answer.status_code == 200, answer.text
        return {row["title"] for row in answer.json()["results"]}

    assert "Alice's editor" in found(tokens["alice"], "tabs spaces")
    for other in (tokens["bob"], owner):
        assert "Alice's editor" not in found(other, "tabs spaces")
        assert "Ledger database" in found(other, "ledger Postgres")
        assert tool(url, other, "memory_get", id=mine_id).status_code == 404
        assert tool(url, other, "memory_delete", id=mine_id).status_code == 404
    assert tool(url, tokens["alice"], "memory_get", id=mine_id).status_code == 200


def test_what_a_member_says_in_a_session_is_recorded_as_theirs(
    service: tuple[Path, str], env: dict[str, str], tmp_path: Path, redis_url: str
) -> None:
    """A preference said in a session opened with a member's token is recorded with their name
    (the drain and the recall index put it in their personal group); the owner's has none."""
    project, url = service
    made = cli(env, "token", "create", "--user", "alice", "--project", str(project), "--json")
    tokens = {"alice": json.loads(made.stdout)["token"]}
    tokens["owner"] = (tmp_path / "data" / "token").read_text().strip()
    for who, token in tokens.items():
        session = f"ses_{who}"
        message = {"id": f"msg_{who}", "sessionID": session, "role": "user"}
        part = {"type": "text", "text": "I prefer tabs over spaces.", "sessionID": session}
        said = {
            "input": {"sessionID": session},
            "output": {"message": message, "parts": [part]},
            "call_id": f"call-{who}",
        }
        answer = httpx.post(
            f"{url}/v1/hooks/chat.message",
            json=said,
            headers={"authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
    client = redis.Redis.from_url(redis_url)
    try:
        prefix = project_prefix(project)
        members = {}
        for who in tokens:
            for raw in client.lrange(f"{prefix}s:ses_{who}:events", 0, -1):
                event = json.loads(raw)
                if event["kind"] == "preference":
                    members[who] = event.get("member")
    finally:
        client.close()
    assert members == {"alice": "alice", "owner": None}
