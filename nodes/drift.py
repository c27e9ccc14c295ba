"""Query drift: Jaccard similarity of the current and the cached query's words."""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z0-9_./-]{3,}")
STOPWORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "have",
        "are",
        "was",
        "were",
        "will",
        "would",
        "should",
        "could",
        "into",
        "then",
        "than",
        "they",
        "them",
        "their",
        "there",
        "what",
        "when",
        "where",
        "which",
        "while",
        "about",
        "also",
        "just",
        "like",
        "make",
        "sure",
        "please",
        "can",
        "you",
        "our",
        "your",
        "its",
        "it's",
        "let's",
        "lets",
    ]
)


def tokenize_query(text: str) -> frozenset[str]:
    """Lower-case content words of a query (three letters or more, no stopwords)."""
    return frozenset(w for w in WORD.findall(text.lower()) if w not in STOPWORDS)


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """|A ∩ B| / |A ∪ B|; 0.0 when both are empty."""
    union = first | second
    return len(first & second) / len(union) if union else 0.0


__all__ = ["jaccard", "tokenize_query"]
