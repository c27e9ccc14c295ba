"""``plait mcp`` for a shared service: the memory tools run on it, over its HTTP API.

With ``PLAIT_URL`` naming a service on another machine (``mcp.remote``; one URL, or replicas
comma-separated, as the plugin and the hook client read it) and ``PLAIT_TOKEN`` (else
``<data_dir>/token``), the MCP server opens no memory on this machine: each ``memory_*`` call is
``POST /v1/memory/{tool}`` on the first listed service that answers, under the user's token
(:class:`~plait.adapters.hosts.http.client.ServiceClient`), so a team member's saves land in the
team's memory (and their personal ones in their own group, by their token). The session tools
(``session_*``) run commands and index their output on this machine, into its own memory: they
are not offered.

A service that cannot be reached, or cannot do it now, makes the call a tool error that says
nothing was done; an argument the service refuses comes back as its message, naming the field.
"""

from __future__ import annotations

from typing import Any

from plait.adapters.hosts.hook_client._client import project_key, service_addresses
from plait.adapters.hosts.http.client import ServiceClient
from plait.adapters.hosts.mcp._tools import session_for
from plait.adapters.hosts.mcp.stdio import ToolAnswer
from plait.observation_tools import answer_text
from plait.state.base.errors import PlaitError


class RemoteBackend:
    """Runs memory tools on the listed services, in order, with the user's token."""

    def __init__(self, client: ServiceClient | None) -> None:
        """``client``: the services; None when no URL and token are known."""
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Run ``name`` on the first service that answers."""
        if self.client is None:
            return ToolAnswer(text="plait: no service URL and token to reach", is_error=True)
        body = dict(arguments)
        body["session_id"] = session_for(body.get("session_id"))
        try:
            answer = await self.client.call(name, **body)
        except PlaitError as error:
            return ToolAnswer(text=f"plait: {error}", is_error=True)
        return ToolAnswer(text=answer_text(answer), structured=answer)

    async def aclose(self) -> None:
        """Close the client's connections."""
        if self.client is not None:
            await self.client.aclose()


def open_remote_backend(data_dir: str, project_dir: str) -> RemoteBackend:
    """The backend over ``PLAIT_URL``'s services and the user's token."""
    addresses = service_addresses(data_dir, project_key(project_dir))
    if not addresses:
        return RemoteBackend(None)
    token = addresses[0][1]
    return RemoteBackend(ServiceClient(",".join(url for url, _ in addresses), token))


__all__ = ["RemoteBackend", "open_remote_backend"]
