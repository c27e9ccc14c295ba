"""Memoized copies of graphiti-core's pure hot helpers, installed in place of the originals.

graphiti-core deduplicates every extracted entity against the group's existing ones with a
MinHash signature of each candidate's name (32 keyed blake2b hashes per 3-gram), recomputed
for every candidate of every episode. The signature depends on the name's shingles alone, so
plait caches it: same input, same output, computed once per distinct name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

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


def install() -> bool:
    """Put the memoized MinHash in graphiti-core (once); False when its helper is missing."""
    current = getattr(dedup_helpers, "_minhash_signature", None)
    if current is None:
        return False
    if not hasattr(current, "plait_original"):
        dedup_helpers._minhash_signature = memoized_signature(current)
    return True


__all__ = ["SIGNATURE_CACHE_SIZE", "install", "memoized_signature"]
