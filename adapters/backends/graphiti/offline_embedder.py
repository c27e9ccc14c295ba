"""A deterministic, offline embedder and reranker: hashed words and character n-grams.

No network and no model weights. Each text becomes a bag of features -- lower-cased word
stems (snake_case and camelCase split, a few coding synonyms folded together) and the
character trigrams of each word -- hashed into ``dimensions`` signed buckets and L2-normalized,
so texts that share words or word parts have a high cosine. It is lexical, not semantic: a
paraphrase with no shared word or word part scores low.

The reranker leaves English stopwords out (NLTK's list, as ``bm25s`` ships it), so a question
and a passage do not look alike for sharing "how", "did" or "we". The embedder keeps them: its
vectors are stored in the graph, and a change would set new queries apart from old vectors.
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections.abc import Iterable
from functools import lru_cache

from bm25s.stopwords import STOPWORDS_EN_PLUS
from graphiti_core.cross_encoder.client import CrossEncoderClient
from graphiti_core.embedder.client import EmbedderClient

from plait.state.words import stem

DEFAULT_DIMENSIONS = 256
EMBEDDING_CACHE_SIZE = 2048
WORD = re.compile(r"[A-Za-z0-9]+")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
WORD_WEIGHT = 1.0
GRAM_WEIGHT = 0.35
SYNONYM_GROUPS = (
    (
        "decide",
        "decision",
        "decided",
        "choose",
        "chose",
        "chosen",
        "choice",
        "pick",
        "picked",
        "select",
        "selected",
        "opt",
        "opted",
        "settle",
        "settled",
    ),
    ("database", "db", "datastore", "store", "storage", "persistence"),
    ("error", "exception", "failure", "fail", "failed", "crash", "bug", "traceback"),
    ("fix", "fixed", "resolve", "resolved", "solve", "solved", "workaround", "patch"),
    ("prefer", "preference", "preferred", "like", "likes", "want", "wants"),
    ("rule", "rules", "convention", "policy", "must", "always", "never"),
    ("test", "tests", "testing", "pytest", "spec", "specs"),
    ("install", "installed", "add", "added", "dependency", "dependencies", "package", "library"),
    ("config", "configuration", "settings", "setting", "option", "options"),
    ("delete", "remove", "removed", "drop", "dropped"),
    ("create", "created", "new", "make"),
    ("function", "func", "method", "def", "fn"),
    ("format", "formatter", "formatting", "lint", "linter", "style"),
)
CANONICAL = {word: group[0] for group in SYNONYM_GROUPS for word in group}
STOPWORDS = frozenset(STOPWORDS_EN_PLUS)


def words(text: str, *, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lower-case words, identifiers split at ``_`` and camelCase, synonyms folded.

    Words in ``skip`` (lower-case) are left out.
    """
    found: list[str] = []
    for token in WORD.findall(text):
        if token.lower() in skip:
            continue
        parts = CAMEL.findall(token) or [token]
        for part in parts:
            lowered = part.lower()
            found.append(CANONICAL.get(lowered, stem(lowered)))
        if len(parts) > 1:
            found.append(token.lower())
    return found


def features(text: str, *, skip: frozenset[str] = frozenset()) -> dict[str, float]:
    """Weighted features of a text: words (but those in ``skip``) and their character trigrams."""
    weights: dict[str, float] = {}
    for word in words(text, skip=skip):
        weights[f"w:{word}"] = weights.get(f"w:{word}", 0.0) + WORD_WEIGHT
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            gram = f"g:{padded[i : i + 3]}"
            weights[gram] = weights.get(gram, 0.0) + GRAM_WEIGHT
    return weights


def bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """The signed bucket of a feature."""
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimensions, (1.0 if (value >> 63) & 1 else -1.0)


@lru_cache(maxsize=EMBEDDING_CACHE_SIZE)
def frozen_embedding(text: str, dimensions: int, content_only: bool = False) -> array[float]:
    """:func:`embed_text` computed once per text (entity names and facts recur a lot).

    Kept as a compact ``array`` (8 bytes a float): 2048 texts of 256 floats take 4 MiB.
    """
    vector = [0.0] * dimensions
    skip = STOPWORDS if content_only else frozenset()
    for feature, weight in features(text, skip=skip).items():
        index, sign = bucket(feature, dimensions)
        vector[index] += sign * (1.0 + math.log(weight)) if weight >= 1 else sign * weight
    norm = math.sqrt(sum(x * x for x in vector))
    return array("d", [x / norm for x in vector] if norm else vector)


def embed_text(
    text: str, dimensions: int = DEFAULT_DIMENSIONS, *, content_only: bool = False
) -> list[float]:
    """The L2-normalized hashed vector of a text (all zeros for a text with no words).

    ``content_only`` leaves English stopwords out.
    """
    return frozen_embedding(text, dimensions, content_only).tolist()


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine of two vectors (0 when either is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class OfflineEmbedder(EmbedderClient):
    """graphiti-core's ``EmbedderClient`` on :func:`embed_text`."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        """Vectors of ``dimensions`` floats."""
        self.dimensions = dimensions

    async def create(
        self, input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]
    ) -> list[float]:
        """Embed one text (a list of strings is joined)."""
        if isinstance(input_data, str):
            return embed_text(input_data, self.dimensions)
        return embed_text(" ".join(str(item) for item in input_data), self.dimensions)

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        """Embed many texts."""
        return [embed_text(text, self.dimensions) for text in input_data_list]


class OfflineReranker(CrossEncoderClient):
    """graphiti-core's ``CrossEncoderClient``: passages by cosine with the query."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        """Rank with vectors of ``dimensions`` floats."""
        self.dimensions = dimensions

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        """Passages with their cosine to the query (stopwords left out), best first."""
        wanted = embed_text(query, self.dimensions, content_only=True)
        scored = [
            (p, cosine(wanted, embed_text(p, self.dimensions, content_only=True))) for p in passages
        ]
        return sorted(scored, key=lambda pair: -pair[1])


__all__ = ["OfflineEmbedder", "OfflineReranker", "cosine", "embed_text", "features", "words"]
