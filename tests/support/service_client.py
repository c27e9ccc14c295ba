"""An HTTP client on plait's service app, in process (httpx's ASGI transport, no socket)."""

from __future__ import annotations

from typing import Any

import httpx


def app_client(app: Any, token: str | None) -> httpx.AsyncClient:
    """A client for ``app`` that sends ``token`` as its bearer token (none: no header)."""
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://plait", headers=headers)
