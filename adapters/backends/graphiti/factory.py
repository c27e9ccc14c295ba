"""Build graphiti-core's ``Graphiti`` on FalkorDB with the configured LLM and embedder.

Providers: ``offline`` (plait's deterministic extractor and hashed embedder, no key),
``openai``, ``anthropic`` (LLM only) and ``openai_compatible`` (Ollama, vLLM, LM Studio: any
``base_url``); embedders also ``sentence_transformers``. A provider whose package is not
installed raises :class:`~plait.MissingExtra`. graphiti-core's telemetry stays off
unless the user opts in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import redis
from graphiti_core import Graphiti
from graphiti_core.driver.falkordb.fulltext import (
    build_falkor_fulltext_query,
    sanitize_falkor_fulltext_query,
)
from graphiti_core.driver.falkordb_driver import FalkorDriver
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.llm_client.client import LLMClient
from graphiti_core.llm_client.config import LLMConfig

from plait.adapters.backends.graphiti.fast_search import PlaitSearchInterface
from plait.adapters.backends.graphiti.offline_embedder import (
    DEFAULT_DIMENSIONS,
    OfflineEmbedder,
    OfflineReranker,
)
from plait.adapters.backends.graphiti.offline_llm import OfflineLLMClient
from plait.adapters.backends.graphiti.speedups import install as install_speedups
from plait.state.base.errors import ConfigError, MissingExtra

TELEMETRY_ENV = "GRAPHITI_TELEMETRY_ENABLED"
LLM_PROVIDERS = frozenset({"offline", "openai", "anthropic", "openai_compatible"})
EMBEDDER_PROVIDERS = frozenset({"offline", "openai", "openai_compatible", "sentence_transformers"})
DEFAULT_SENTENCE_MODEL = "all-MiniLM-L6-v2"
DEFAULT_DATABASE = "default_db"
CONNECT_TIMEOUT_SECONDS = 5.0
DEFAULT_PORT = 6379


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderConfig:
    """An LLM or embedder provider: which, which model, where, with which key."""

    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    dimensions: int = DEFAULT_DIMENSIONS


def configure_telemetry(enabled: bool) -> None:
    """graphiti-core reads this variable on every event: off unless the user opted in."""
    os.environ[TELEMETRY_ENV] = "true" if enabled else "false"


def falkordb_client(
    url: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 6379,
    password: str | None = None,
) -> Any:
    """The async FalkorDB client of a ``redis://`` URL, or of host, port and password.

    The client asks the server whether it is a cluster, synchronously, as it is built: call
    it off the event loop (:func:`make_graphiti` does).
    """
    from falkordb.asyncio import FalkorDB

    if url:
        return FalkorDB.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)
    return FalkorDB(
        host=host,
        port=port,
        password=password,
        socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
    )


def address_of(url: str | None, host: str, port: int) -> tuple[str, int] | None:
    """``(host, port)`` of a TCP server URL (None for a unix socket)."""
    if not url:
        return host, port
    parts = urlsplit(url)
    if parts.scheme in {"unix", ""}:
        return None
    return parts.hostname or "localhost", parts.port or DEFAULT_PORT


async def probe(address: tuple[str, int] | None) -> None:
    """Fail fast, with ``redis.ConnectionError``, when nothing listens at the address.

    The FalkorDB client's own first connection retries with backoff for seconds.
    """
    if address is None:
        return
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(*address), CONNECT_TIMEOUT_SECONDS
        )
    except (OSError, TimeoutError) as error:
        raise redis.ConnectionError(f"{address[0]}:{address[1]}: {error}") from error
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


def make_llm_client(config: ProviderConfig) -> LLMClient:
    """graphiti-core's LLM client for a provider."""
    if config.provider not in LLM_PROVIDERS:
        raise ConfigError(f"llm.provider: unknown provider {config.provider!r}")
    if config.provider == "offline":
        return OfflineLLMClient()
    llm_config = LLMConfig(
        api_key=config.api_key,
        model=config.model,
        small_model=config.model,
        base_url=config.base_url,
    )
    if config.provider == "anthropic":
        try:
            from graphiti_core.llm_client.anthropic_client import AnthropicClient
        except ImportError as error:
            raise MissingExtra("the Anthropic LLM provider", "anthropic") from error
        return AnthropicClient(config=llm_config)
    if config.provider == "openai_compatible":
        if not config.base_url:
            raise ConfigError("llm.base_url: openai_compatible needs a base_url")
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

        if llm_config.api_key is None:  # local servers accept any key; the SDK wants one
            llm_config.api_key = "not-needed"
        return OpenAIGenericClient(config=llm_config)
    from graphiti_core.llm_client.openai_client import OpenAIClient

    return OpenAIClient(config=llm_config)


class SentenceTransformerEmbedder(EmbedderClient):
    """graphiti-core's ``EmbedderClient`` on a local sentence-transformers model."""

    def __init__(self, model_name: str, dimensions: int | None = None) -> None:
        """Load ``model_name`` (raises :class:`MissingExtra` without the package)."""
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise MissingExtra("the sentence-transformers embedder", "sentence-transformers") from (
                error
            )
        self.model = SentenceTransformer(model_name)
        self.dimensions = dimensions

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.encode(texts, normalize_embeddings=True)
        return [[float(x) for x in vector[: self.dimensions]] for vector in vectors]

    async def create(self, input_data: str | list[str] | Iterable[Any]) -> list[float]:
        """Embed one text."""
        text = input_data if isinstance(input_data, str) else " ".join(map(str, input_data))
        return (await asyncio.to_thread(self._encode, [text]))[0]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        """Embed many texts."""
        return await asyncio.to_thread(self._encode, input_data_list)


def make_embedder(config: ProviderConfig) -> EmbedderClient:
    """graphiti-core's embedder for a provider."""
    if config.provider not in EMBEDDER_PROVIDERS:
        raise ConfigError(f"embedder.provider: unknown provider {config.provider!r}")
    if config.provider == "offline":
        return OfflineEmbedder(config.dimensions)
    if config.provider == "sentence_transformers":
        return SentenceTransformerEmbedder(config.model or DEFAULT_SENTENCE_MODEL)
    if config.provider == "openai_compatible" and not config.base_url:
        raise ConfigError("embedder.base_url: openai_compatible needs a base_url")
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig

    options: dict[str, Any] = {
        "api_key": config.api_key or ("not-needed" if config.base_url else None),
        "base_url": config.base_url,
        "embedding_dim": config.dimensions,
    }
    if config.model:
        options["embedding_model"] = config.model
    return OpenAIEmbedder(config=OpenAIEmbedderConfig(**options))


_indexed: set[str] = set()


def server_of(client: Any) -> str:
    """``host:port`` of a FalkorDB client's server (the client's id when unknown)."""
    pool = getattr(getattr(client, "connection", None), "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", {}) or {}
    if "host" in kwargs:
        return f"{kwargs['host']}:{kwargs.get('port', 6379)}"
    return f"client-{id(client)}"


VECTOR_INDEX = (
    "CREATE VECTOR INDEX FOR ()-[e:RELATES_TO]-() ON (e.fact_embedding) "
    "OPTIONS {{dimension: {dimensions}, similarityFunction: 'cosine'}}"
)


async def embedding_dimensions(graphiti: Graphiti) -> int:
    """How many floats the embedder returns (asked once, then remembered on the driver)."""
    driver = graphiti.driver
    known = getattr(driver, "vector_dimensions", None)
    if known:
        return known
    embedder = graphiti.embedder
    configured = getattr(getattr(embedder, "config", None), "embedding_dim", None)
    dimensions = (
        getattr(embedder, "dimensions", None)
        or configured
        or len(await embedder.create("dimensions"))
    )
    if isinstance(driver, PlaitFalkorDriver):
        driver.vector_dimensions = dimensions
    return dimensions


async def build_indices(graphiti: Graphiti, group_ids: Iterable[str] = ()) -> None:
    """Range, full-text and fact-vector indices, once per graph per process.

    Each group is its own FalkorDB graph. The vector index on facts lets plait's edge search
    skip the exact scan (:mod:`plait.adapters.backends.graphiti.fast_search`).
    """
    driver = graphiti.driver
    vectors = isinstance(driver, PlaitFalkorDriver) and driver.fast_search
    dimensions = await embedding_dimensions(graphiti) if vectors else 0
    server = server_of(getattr(driver, "client", None))
    for group_id in [None, *group_ids]:
        scoped = driver if group_id is None else driver.clone(database=group_id)
        key = f"{server}/{getattr(scoped, '_database', '')}/{dimensions}"
        if key in _indexed:
            continue
        await scoped.build_indices_and_constraints()
        if vectors:
            await scoped.execute_query(VECTOR_INDEX.format(dimensions=int(dimensions)))
        _indexed.add(key)


async def drop_group(graphiti: Graphiti, group_id: str) -> None:
    """Delete a group's graph (none yet: nothing to do), and forget its indices were built."""
    driver = graphiti.driver.clone(database=group_id)
    server = server_of(getattr(driver, "client", None))
    if await driver.client.connection.exists(group_id):  # type: ignore[attr-defined]
        await driver.client.select_graph(group_id).delete()  # type: ignore[attr-defined]
    _indexed.difference_update({k for k in _indexed if k.startswith(f"{server}/{group_id}/")})


async def make_graphiti(
    *,
    falkordb_url: str | None = None,
    host: str = "127.0.0.1",
    port: int = 6379,
    password: str | None = None,
    llm: ProviderConfig | None = None,
    embedder: ProviderConfig | EmbedderClient | None = None,
    telemetry: bool = False,
    group_ids: Iterable[str] = (),
    fast_search: bool = True,
    build: bool = True,
    llm_client: LLMClient | None = None,
) -> Graphiti:
    """A ``Graphiti`` on FalkorDB (the hot tier's server or ``falkordb_url``), indices built.

    Args:
        falkordb_url: ``redis://[:password@]host:port``; else ``host``/``port``/``password``.
        host: FalkorDB host when no URL is given.
        port: FalkorDB port when no URL is given.
        password: FalkorDB password when no URL is given.
        llm: the LLM provider (offline when None).
        embedder: the embedder provider, or a ready embedder (offline when None).
        telemetry: graphiti-core's anonymous telemetry; off unless True.
        group_ids: groups (FalkorDB graphs) whose indices to build now.
        fast_search: plait's edge searches (False: graphiti-core's own, for comparison).
        build: build indices now (False: connect lazily; they are built on first use).
        llm_client: a ready graphiti-core LLM client, used instead of ``llm``.
    """
    configure_telemetry(telemetry)
    install_speedups()
    await probe(address_of(falkordb_url, host, port))
    client = await asyncio.to_thread(
        falkordb_client, falkordb_url, host=host, port=port, password=password
    )
    driver = PlaitFalkorDriver(falkor_db=client, fast_search=fast_search)
    graphiti = Graphiti(
        graph_driver=driver,
        llm_client=llm_client or make_llm_client(llm or ProviderConfig()),
        embedder=(
            embedder
            if isinstance(embedder, EmbedderClient)
            else make_embedder(embedder or ProviderConfig())
        ),
        cross_encoder=OfflineReranker(),
    )
    if build:
        await build_indices(graphiti, group_ids)
    return graphiti


def searchable_words(query: str) -> str:
    """The query's words that a RediSearch full-text query can hold.

    graphiti-core turns punctuation into spaces; what is left of a word must still have a
    letter or a digit (``_`` alone is a syntax error), and no control character.
    """
    words = sanitize_falkor_fulltext_query(query).split()
    kept = ("".join(ch for ch in word if ch.isprintable()) for word in words)
    return " ".join(word for word in kept if any(ch.isalnum() for ch in word))


# graphiti-core's exact-name lookup of entities (``EntityNode.get_by_names``, run when it
# resolves an episode's entities), and the same lookup one name at a time. FalkorDB 4.x
# (falkordblite's) crashes, signal 11 in ``QueryNode_AddChildren``, on ``n.name IN $names`` over
# Entity, whose name has a range and a full-text index, for lists of about eight names or more.
NAMES_LOOKUP = re.compile(
    r"MATCH \(n:Entity\)\s+WHERE n\.group_id IN \$group_ids\s+AND n\.name IN \$names\s+RETURN"
)
NAME_BY_NAME = (
    "UNWIND $names AS name MATCH (n:Entity {name: name}) WHERE n.group_id IN $group_ids RETURN"
)


def one_name_at_a_time(cypher: str) -> str:
    """``cypher`` with graphiti-core's exact-name lookup made one index lookup per name."""
    if "n.name IN $names" not in cypher:  # every other query, unchanged and unscanned
        return cypher
    return NAMES_LOOKUP.sub(NAME_BY_NAME, cypher, count=1)


class PlaitFalkorDriver(FalkorDriver):
    """``FalkorDriver`` with plait's fixes.

    - Its constructor does not schedule index building: the stock one starts a background
      task for every clone (one per group and per search call); plait builds indices once
      per graph instead (:func:`build_indices`).
    - Full-text queries drop graphiti's ``@group_id`` filter (see :meth:`build_fulltext_query`).
    - Edge searches go through :class:`PlaitSearchInterface` (see ``fast_search``) unless
      ``fast_search`` is False.
    - Entities are looked up by name one name at a time (:func:`one_name_at_a_time`): the
      stock lookup crashes the server.
    """

    def __init__(
        self, falkor_db: Any, database: str = DEFAULT_DATABASE, *, fast_search: bool = True
    ) -> None:
        """Wrap an async FalkorDB client."""
        super().__init__(falkor_db=falkor_db, database=database)
        if self._init_task is not None:
            self._init_task.cancel()
            self._init_task = None
        self.fast_search = fast_search
        self.search_interface = PlaitSearchInterface() if fast_search else None
        self.vector_dimensions: int | None = None

    async def execute_query(self, cypher_query_: str, **kwargs: Any) -> Any:
        """Run a query (graphiti-core's exact-name lookup made one name at a time)."""
        return await super().execute_query(one_name_at_a_time(cypher_query_), **kwargs)

    def build_fulltext_query(
        self, query: str, group_ids: list[str] | None = None, max_query_length: int = 128
    ) -> str:
        """The full-text query without graphiti's ``@group_id`` filter.

        On FalkorDB each group is its own graph, so the filter is redundant (the Cypher around
        it also checks ``group_id IN $group_ids``), and it is wrong for ids with ``-``: the
        index splits ``plait-app-1a2b`` into tokens, so the escaped phrase never matches and
        full-text search silently returns nothing.

        Words RediSearch cannot parse are left out (:func:`searchable_words`): a lone ``_``
        failed the whole query, and with it the episode's write.
        """
        return build_falkor_fulltext_query(searchable_words(query), None, max_query_length)

    def clone(self, database: str) -> FalkorDriver:
        """The same connection on another graph."""
        if database == self._database:
            return self
        clone = PlaitFalkorDriver(
            falkor_db=self.client, database=database, fast_search=self.fast_search
        )
        clone.vector_dimensions = self.vector_dimensions
        return clone

    def plain(self) -> PlaitFalkorDriver:
        """This graph without plait's search interface (graphiti-core's own searches)."""
        return PlaitFalkorDriver(falkor_db=self.client, database=self._database, fast_search=False)


__all__ = [
    "EMBEDDER_PROVIDERS",
    "LLM_PROVIDERS",
    "TELEMETRY_ENV",
    "PlaitFalkorDriver",
    "one_name_at_a_time",
    "ProviderConfig",
    "build_indices",
    "drop_group",
    "configure_telemetry",
    "falkordb_client",
    "make_embedder",
    "make_graphiti",
    "make_llm_client",
    "searchable_words",
]
