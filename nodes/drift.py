"""Query drift: Jaccard similarity of the current and the cached query's words."""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z0-9_./-]{3,}")
QUERY_SCAN_CHARS = 4000
STOPWORD_TEXT = (
    "the and for with that this from have are was were will would should could into then than "
    "they them their there what when where which while about also just like make sure please "
    "can you our your its it's let's lets now need want does did not but all any some"
)
STOPWORDS = frozenset(STOPWORD_TEXT.split())


def word_forms(word: str) -> list[str]:
    """A word and, for a path or dotted name, its parts (``src/cache.py`` → ``cache``…)."""
    word = word.strip("./-_")
    parts = [part for part in re.split(r"[./-]", word) if len(part) >= 3]
    forms = [word, *parts] if len(parts) > 1 or (parts and parts[0] != word) else [word]
    return [singular(form) for form in forms if len(form) >= 3]


def singular(word: str) -> str:
    """A light plural fold (``tests`` → ``test``) so inflection does not read as drift."""
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokenize_query(text: str) -> frozenset[str]:
    """Lower-case content words of a query (three letters or more, no stopwords)."""
    words = WORD.findall(text[:QUERY_SCAN_CHARS].lower())
    return (
        frozenset(form for word in words if word not in STOPWORDS for form in word_forms(word))
        - STOPWORDS
    )


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """|A ∩ B| / |A ∪ B|; 0.0 when both are empty."""
    union = first | second
    return len(first & second) / len(union) if union else 0.0


__all__ = ["jaccard", "tokenize_query"]
