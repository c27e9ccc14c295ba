"""plait's memory on a shared service, from Python: ``plait.connect(url, token)``.

A builder whose agent runs on another machine than the team's ``plait serve`` reaches its memory
tools over HTTP (``POST /v1/memory/{tool}``), under their own token, so what they save lands in
the team's memory (a personal observation in their own group) and what they search is the
team's. The URL may list replicas, comma-separated: a call goes to the first that answers.
Errors are plait's own: a field the service refuses is a :class:`UsageError` naming it, an id it
does not know an :class:`UnknownObservation`, a session another member started
:class:`NotYourSession`, a refused token a :class:`ConfigError`, a service that cannot be
reached, is over its rate or cannot do it now a :class:`BackendUnavailable` (nothing was done).
A session's turns reach a shared service through the hosts' hooks (the plugin, ``plait-hook``),
which keep what it did not take.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType
from typing import Any

import httpx

from plait.state.base.errors import BackendUnavailable, ConfigError, NotYourSession, UsageError
from plait.state.observations import UnknownObservation

TIMEOUT_S = 30.0


def service_address(url: str | None, token: str | None) -> tuple[list[str], str]:
    """The service's URLs (``url``, else ``PLAIT_URL``; comma-separated replicas) and token.

    Raises:
        ConfigError: no URL or no token.
    """
    listed = url if url is not None else os.environ.get("PLAIT_URL", "")
    urls = [part.strip().rstrip("/") for part in listed.split(",") if part.strip()]
    token = token if token is not None else os.environ.get("PLAIT_TOKEN", "")
    if not urls:
        raise ConfigError("url: no plait service URL (pass one or set PLAIT_URL)")
    if not token:
        raise ConfigError("token: no token for the plait service (pass one or PLAIT_TOKEN)")
    return urls, token


def unanswered(failures: list[str]) -> BackendUnavailable:
    """The error when no listed service answered."""
    return BackendUnavailable(
        f"no plait service answered, nothing was done ({'; '.join(failures)})"
    )


class ServiceClient:
    """The memory tools of a plait service (``memory_save``, ``memory_search``, …).

    Async calls (:meth:`call`) and blocking ones from any thread (:meth:`post`, which the
    LangChain host uses under ``invoke`` and ``ainvoke`` alike) each get a connection pool, opened
    when first used; :meth:`aclose` closes both.
    """

    def __init__(
        self, url: str | None = None, token: str | None = None, *, timeout: float = TIMEOUT_S
    ) -> None:
        """Talk to ``url`` (default ``PLAIT_URL``) with ``token`` (default ``PLAIT_TOKEN``).

        Raises:
            ConfigError: no URL or no token.
        """
        self.urls, self.token = service_address(url, token)
        self.timeout = timeout
        self._headers = {"authorization": f"Bearer {self.token}"}
        self._async: httpx.AsyncClient | None = None
        self._sync: httpx.Client | None = None
        self._opening = threading.Lock()

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """Run one memory tool on the first service that answers; its JSON answer."""
        body = {key: value for key, value in arguments.items() if value is not None}
        if self._async is None:
            self._async = httpx.AsyncClient(headers=self._headers, timeout=self.timeout)
        failures = []
        for url in self.urls:
            try:
                answer = await self._async.post(f"{url}/v1/memory/{tool}", json=body)
            except httpx.HTTPError as error:
                failures.append(f"{url}: {error or type(error).__name__}")
                continue
            return answered(answer, url, body)
        raise unanswered(failures)

    def post(
        self, path: str, body: dict[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """``POST path`` on the first service that answers, blocking; its JSON answer.

        Raises:
            BackendUnavailable: none answered within ``timeout`` (default the client's) each.
            UsageError, ConfigError, UnknownObservation: what the service refused, named.
        """
        with self._opening:
            if self._sync is None:
                self._sync = httpx.Client(headers=self._headers, timeout=self.timeout)
            client = self._sync
        failures = []
        for url in self.urls:
            try:
                answer = client.post(f"{url}{path}", json=body, timeout=timeout or self.timeout)
            except httpx.HTTPError as error:
                failures.append(f"{url}: {error or type(error).__name__}")
                continue
            return answered(answer, url, body)
        raise unanswered(failures)

    async def save(self, title: str, content: str, **more: Any) -> dict[str, Any]:
        """``memory_save``: keep a decision, rule, preference … (``type``, ``scope``, …)."""
        return await self.call("memory_save", title=title, content=content, **more)

    async def search(self, query: str, **more: Any) -> dict[str, Any]:
        """``memory_search``: what the memory holds about ``query``."""
        return await self.call("memory_search", query=query, **more)

    async def get(self, observation_id: str) -> dict[str, Any]:
        """``memory_get``: one observation, whole."""
        return await self.call("memory_get", id=observation_id)

    async def delete(self, observation_id: str) -> dict[str, Any]:
        """``memory_delete``: forget one observation (every copy plait made of it)."""
        return await self.call("memory_delete", id=observation_id)

    async def aclose(self) -> None:
        """Close the connections."""
        self.close_blocking()
        if self._async is not None:
            await self._async.aclose()

    def close_blocking(self) -> None:
        """Close the blocking calls' connections (:meth:`post`)."""
        with self._opening:
            if self._sync is not None:
                self._sync.close()
                self._sync = None

    async def __aenter__(self) -> ServiceClient:
        """Use as ``async with plait.connect(...) as team:``."""
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Close the connections."""
        await self.aclose()


def answered(answer: httpx.Response, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """The tool's JSON answer, or plait's error for what the service said."""
    try:
        data = answer.json()
    except ValueError:
        data = None
    if answer.status_code == 200 and isinstance(data, dict):
        return data
    detail = str(data.get("detail") if isinstance(data, dict) else "") or answer.text[:300]
    if answer.status_code == 404 and isinstance(body.get("id"), str):
        raise UnknownObservation(body["id"])
    theirs = isinstance(data, dict) and data.get("error") == NotYourSession.code
    if answer.status_code == 403 and theirs:
        raise NotYourSession(str(body.get("session_id") or ""))
    if answer.status_code in (401, 403):
        raise ConfigError(
            f"token: the service at {url} refused the token ({answer.status_code}): {detail}"
        )
    if answer.status_code in (400, 404, 413, 422):
        raise UsageError(detail or f"the service at {url} refused the call ({answer.status_code})")
    raise BackendUnavailable(
        f"the service at {url} did not do it ({answer.status_code}), nothing was done: {detail}"
    )


def connect(url: str | None = None, token: str | None = None) -> ServiceClient:
    """A client of the plait service at ``url`` (default ``PLAIT_URL``) under ``token``."""
    return ServiceClient(url, token)


__all__ = ["ServiceClient", "answered", "connect", "service_address", "unanswered"]
