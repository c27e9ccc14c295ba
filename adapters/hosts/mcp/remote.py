"""``plait mcp`` for a shared service: the memory tools run on it, over its HTTP API.

With ``PLAIT_URL`` (one service URL, or replicas comma-separated, as the plugin and the hook
client read it) and ``PLAIT_TOKEN`` (else ``<data_dir>/token``), the MCP server opens no memory on
this machine: each ``memory_*`` call is ``POST /v1/memory/{tool}`` on the first listed service
that answers, under the user's token, so a team member's saves land in the team's memory (and
their personal ones in their own group, by their token). The session tools (``session_*``) run
commands and index their output on this machine, into its own memory: they are not offered.

A service that cannot be reached, or answers 503, makes the call a tool error that says nothing
was done; an argument the service refuses comes back as its message, naming the field.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from plait.adapters.hosts.hook_client._client import post, project_key, service_addresses
from plait.adapters.hosts.mcp._tools import session_for
from plait.adapters.hosts.mcp.stdio import ToolAnswer
from plait.observation_tools import answer_text

ROUTE = "/v1/memory/{}"
TIMEOUT_S = 30.0


class RemoteBackend:
    """Runs memory tools on the listed services, in order, with the user's token."""

    def __init__(self, addresses: list[tuple[str, str]]) -> None:
        """``addresses``: (URL, token) pairs to try in order."""
        self.addresses = addresses

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Run ``name`` on the first service that answers."""
        body = dict(arguments)
        body["session_id"] = session_for(body.get("session_id"))
        payload = json.dumps(body, ensure_ascii=False).encode()
        failures = []
        for url, token in self.addresses:
            try:
                reply = await asyncio.to_thread(
                    post, url, token, payload, TIMEOUT_S, ROUTE.format(name)
                )
            except (OSError, ValueError) as error:
                failures.append(f"{url}: {error or type(error).__name__}")
                continue
            return answer_of(reply.status, reply.body, url)
        if not failures:
            return ToolAnswer(text="plait: no service URL and token to reach", is_error=True)
        return ToolAnswer(
            text=f"plait: no service answered, nothing was done ({'; '.join(failures)})",
            is_error=True,
        )

    async def aclose(self) -> None:
        """Nothing is held between calls."""


def answer_of(status: int, raw: bytes, url: str) -> ToolAnswer:
    """A service's answer as the tool's: its JSON, or its error's message."""
    answer: Any = None
    with contextlib.suppress(ValueError):
        answer = json.loads(raw)
    if status == 200 and isinstance(answer, dict):
        return ToolAnswer(text=answer_text(answer), structured=answer)
    detail = answer.get("detail") if isinstance(answer, dict) else None
    text = str(detail or raw.decode("utf-8", "replace")[:300] or f"status {status}")
    if status in (401, 403):
        text = f"the service at {url} refused the token ({status}): {text}"
    elif status >= 500:
        text = f"the service at {url} did not do it ({status}), nothing was done: {text}"
    return ToolAnswer(text=f"plait: {text}", is_error=True)


def open_remote_backend(data_dir: str, project_dir: str) -> RemoteBackend:
    """The backend over ``PLAIT_URL``'s services and the user's token."""
    return RemoteBackend(service_addresses(data_dir, project_key(project_dir)))


__all__ = ["RemoteBackend", "open_remote_backend"]
