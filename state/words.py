"""One stemmer for every place plait matches words: Snowball's English, from PyStemmer.

The recall ranking, supersession, observation search and the offline embedder all fold words to
the same stems (``caching``, ``caches`` and ``cache`` to ``cach``; ``logging`` to ``log``), so
a word that matches in one place matches in all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import Stemmer

_ENGLISH = Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The stem of one lower-case word."""
    return _ENGLISH.stemWord(word)


def stem_words(words: Sequence[str]) -> list[str]:
    """The stems of lower-case words, in order."""
    return _ENGLISH.stemWords(words)


__all__ = ["stem", "stem_words"]
