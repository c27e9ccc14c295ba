"""Faster copies of graphiti-core's and FalkorDB's pure hot helpers, installed in their place.

- graphiti-core deduplicates every extracted entity against the group's existing ones with a
  MinHash signature of each candidate's name (32 keyed blake2b hashes per 3-gram), recomputed
  for every candidate of every episode. The signature depends on the name's shingles alone, so
  plait caches it: same input, same output, computed once per distinct name.
- Every query's parameters are walked value by value three times (datetimes to strings, NUL
  bytes out, then into the Cypher header), embeddings included: 256 or more floats per entity
  and fact, the largest share of an offline drain's time. A list of floats has no datetime, no
  string and one header form, so plait takes it in one step: the same output, without the
  per-float recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from graphiti_core.utils.maintenance import dedup_helpers

SIGNATURE_CACHE_SIZE = 4096  # about 5 MB of 32-hash signatures

Signature = tuple[int, ...]


def memoized_signature(original: Callable[[Iterable[str]], Signature]) -> Callable:
    """``original`` (a MinHash of a shingle set) cached by the set's frozen copy."""

    @lru_cache(maxsize=SIGNATURE_CACHE_SIZE)
    def of_frozen(shingles: frozenset[str]) -> Signature:
        return original(shingles)

    def signature(shingles: Iterable[str]) -> Signature:
        return of_frozen(frozenset(shingles))

    signature.plait_original = original  # type: ignore[attr-defined]
    signature.cache_info = of_frozen.cache_info  # type: ignore[attr-defined]
    return signature


def is_vector(value: object) -> bool:
    """A non-empty list of floats (an embedding)."""
    return type(value) is list and bool(value) and all(type(item) is float for item in value)


def vector_passthrough(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``original`` (a recursive walk that leaves floats as they are), with vectors as is."""

    def walk(value: Any) -> Any:
        return value if is_vector(value) else original(value)

    walk.plait_original = original  # type: ignore[attr-defined]
    return walk


def vector_header(original: Callable[[Any], str]) -> Callable[[Any], str]:
    """FalkorDB's ``stringify_param_value``, a vector joined at once (``str`` of each float)."""

    def stringify(value: Any) -> str:
        return f"[{','.join(map(str, value))}]" if is_vector(value) else original(value)

    stringify.plait_original = original  # type: ignore[attr-defined]
    return stringify


def replace(module: Any, name: str, wrap: Callable[[Any], Any]) -> None:
    """Wrap ``module.name`` once (a second install leaves it as it is)."""
    current = getattr(module, name, None)
    if current is not None and not hasattr(current, "plait_original"):
        setattr(module, name, wrap(current))


def install() -> bool:
    """Put the faster helpers in place (once); False when graphiti's MinHash is missing.

    The recursive helpers call themselves through their module's global name, so the wrapped
    versions are taken at every level of a nested parameter.
    """
    from falkordb import graph as falkordb_graph
    from falkordb import helpers as falkordb_helpers
    from graphiti_core.driver import falkordb_driver
    from graphiti_core.utils import bulk_utils, datetime_utils

    name = "convert_datetimes_to_strings"
    replace(datetime_utils, name, vector_passthrough)
    for module in (falkordb_driver, bulk_utils):  # they imported it by name
        setattr(module, name, getattr(datetime_utils, name))
    replace(falkordb_driver, "_strip_nul_bytes", vector_passthrough)
    replace(falkordb_helpers, "stringify_param_value", vector_header)
    falkordb_graph.stringify_param_value = falkordb_helpers.stringify_param_value
    current = getattr(dedup_helpers, "_minhash_signature", None)
    if current is None:
        return False
    if not hasattr(current, "plait_original"):
        dedup_helpers._minhash_signature = memoized_signature(current)
    return True


__all__ = ["SIGNATURE_CACHE_SIZE", "install", "memoized_signature"]
