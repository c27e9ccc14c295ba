"""Whether a string looks like a random secret rather than a word, a name or a hash (pure).

The rule, measured on 69,609 distinct long tokens of real code and docs (every package installed
with plait) and on random strings of each alphabet:

A candidate of 20 to 1024 characters is *random* when all of these hold:

1. It is not hash-like: hex only (with or without ``-``/``_``, so commit ids, sha256/md5 digests,
   UUIDs and docker digests are kept), and it does not start with a hash label (``sha512-``,
   ``sha256-``, ``md5-`` …: package integrity strings) or a known non-secret id prefix (``ses_``,
   ``msg_``, ``call_``, ``toolu_`` …: session, message and tool-call ids of agent hosts).
2. It is not a snake/kebab identifier: three or more ``_``/``-`` separated parts, each of one
   case or a camelCase word with digits after it (``g2_hash_with_edge_attr1``,
   ``gpt-4o-mini-2024-07-18``, ``OP_NO_SSLv2_OR_SSLv3``).
3. Mixed case (base62/base64 alphabets) with a digit or ``+``/``/``: its word segments
   (``[A-Z]?[a-z]+``, upper-case runs, digit runs) number at least 0.3 a character
   (``ResolveTimeoutTestCase`` has 0.18, random base62 about 0.55), and where they number
   below 0.45 at most 70 % of its letters sit in vowel-bearing segments of three or more
   (camelCase words are pronounceable, random letters are not). Letters only (no digit,
   ``+`` or ``/``): at least 0.35 segments a character and at most 60 % of its letters in
   vowel-bearing segments of three or more.
   One case with digits (base36, base32): at least ``max(2, n/16)`` digit runs, and letters
   for a quarter of it at least (``4128e+03`` is a number).
4. Its Shannon entropy per character is at least ``log2(min(n, alphabet)) - 1.3``, where the
   alphabet is the size implied by the character classes present.

Measured (``tests`` keep the cases; the figures are from a scratch run): 0.33 % of the real-world
tokens are called random, most of them base64 blobs (font tables, test vectors, fake keys).
Random keys missed: base62/base64 0.6-1.2 % at 32 characters, 0.3-0.6 % at 40, 3-5 % at 20;
lower-case base36 0.1 % at 32, 2 % at 20; upper-case base32 1.7 % at 32, 12 % at 20.

Base64 with ``/`` in a sentence (``redact``, AWS secret-key shape, 40 characters, 100,000 drawn
keys), measured on 2026-11-29: 0.091 % kept; 0.053 % after :func:`looks_random_path` (five
slashes no longer make one a path; no new false positive among 253,991 distinct tokens of the
installed packages); 0.027 % after the letters-only rule of rule 3 (base62 kept: 0.43 % →
0.20 % at 32 characters, 3.1 % → 0.7 % at 20; seven more of the 253,991 tokens called random,
0.103 % → 0.106 %: two base64 blobs, two test alphabets, two numpy names such as
``PyUFunc_FF_F_As_DD_D``, one format string). What is left are keys whose parts segment like
words.
"""

from __future__ import annotations

import math
import re
from collections import Counter

MIN_LENGTH = 20
MAX_LENGTH = 1024

_HASH_LIKE = re.compile(r"[0-9a-f_-]+|[0-9A-F_-]+")
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_WORD_PART = re.compile(
    r"[a-z0-9]*|[A-Z0-9]*|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*[0-9]*|[A-Z]+[a-z]?[0-9]*"
)
_PART_SEPARATOR = re.compile(r"[_-]")
_PATH_SEPARATOR = re.compile(r"[/_-]")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_NOT_SECRET_PREFIXES = (
    # hash labels of integrity strings (npm, SRI, nix)
    "sha1-",
    "sha224-",
    "sha256-",
    "sha384-",
    "sha512-",
    "md5-",
    "blake2b-",
    # ids agent hosts and model APIs put everywhere: sessions, messages, parts, tool calls
    "ses_",
    "msg_",
    "prt_",
    "call_",
    "toolu_",
    "chatcmpl-",
    "req_",
    "resp_",
    "run-",
    "run_",
    "thread_",
    "asst_",
    "batch_",
    "evt_",
)
_DENSE_SEGMENTS = 0.45
_MIN_SEGMENTS = 0.3
_MAX_WORDY = 0.7
_ENTROPY_SLACK = 1.3
# A pronounceable-looking candidate is still random when its entropy is this far over the floor
# (a drawn base64 key can segment like words: ``YzSPJFO4Oala4NUJCUFSdFyg…``).
_WORDY_ENTROPY_MARGIN = 0.5
# Letters only (no digit, "+" or "/"): stricter, as names are made of letters too
_LETTERS_SEGMENTS = 0.35
_LETTERS_WORDY = 0.6


def looks_random(candidate: str) -> bool:
    """Whether ``candidate`` looks like a random secret (the rule is in the module docstring)."""
    length = len(candidate)
    if not MIN_LENGTH <= length <= MAX_LENGTH or _HASH_LIKE.fullmatch(candidate):
        return False
    if candidate.startswith(_NOT_SECRET_PREFIXES) or _is_identifier(candidate):
        return False
    has_digit = any(char.isdigit() for char in candidate)
    if candidate.islower() or candidate.isupper():
        return has_digit and _one_case_random(candidate)
    if not has_digit and "+" not in candidate and "/" not in candidate:
        return _letters_random(candidate)
    return _mixed_case_random(candidate)


def looks_random_path(candidate: str) -> bool:
    """Base64 cut by ``/`` rather than a path (its parts may be as short as a path's).

    Random without its slashes, and some part of it no word: ``usr/X11R6/lib/X11/fonts`` is
    all words, ``Kq9Z/aB3x`` is not.
    """
    parts = _PATH_SEPARATOR.split(candidate)
    return not all(map(_WORD_PART.fullmatch, parts)) and looks_random(candidate.replace("/", ""))


def _is_identifier(candidate: str) -> bool:
    """``snake_case_2``, ``kebab-case-v2``, ``OP_NO_SSLv2``: three or more word-like parts."""
    parts = _PART_SEPARATOR.split(candidate)
    return len(parts) >= 3 and all(_WORD_PART.fullmatch(part) for part in parts)


def _one_case_random(candidate: str) -> bool:
    """Base36/base32-like: digits scattered through letters, and enough entropy."""
    segments = _SEGMENT.findall(candidate)
    digit_runs = sum(segment[0].isdigit() for segment in segments)
    letters = sum(len(segment) for segment in segments if not segment[0].isdigit())
    if digit_runs < max(2, len(candidate) / 16) or letters < len(candidate) / 4:
        return False  # a name with a version in it, or a number (``4128e+03``)
    return _entropy(candidate) >= _entropy_floor(len(candidate), 36)


def _mixed_case_random(candidate: str) -> bool:
    """Base62/base64-like: many short segments, not pronounceable, enough entropy."""
    segments = _SEGMENT.findall(candidate)
    density = len(segments) / len(candidate)
    if density < _MIN_SEGMENTS:
        return False
    floor = _entropy_floor(len(candidate), _alphabet_size(candidate))
    entropy = _entropy(candidate)
    wordy = density < _DENSE_SEGMENTS and _wordy_share(segments) > _MAX_WORDY
    if wordy and entropy < floor + _WORDY_ENTROPY_MARGIN:
        return False  # pronounceable (``NotificationServiceHandler2``), unless far too varied
    return entropy >= floor


def _letters_random(candidate: str) -> bool:
    """Letters of both cases only: random when dense in segments and seldom pronounceable.

    Long camelCase names (``PaymentMethodDoesNotBelongToSubscription``) are made of words.
    """
    segments = _SEGMENT.findall(candidate)
    if len(segments) / len(candidate) < _LETTERS_SEGMENTS:
        return False
    if _wordy_share(segments) > _LETTERS_WORDY:
        return False
    return _entropy(candidate) >= _entropy_floor(len(candidate), _alphabet_size(candidate))


def _wordy_share(segments: list[str]) -> float:
    """The share of letters in segments of three or more that carry a vowel."""
    letters = [segment for segment in segments if not segment[0].isdigit()]
    total = sum(map(len, letters)) or 1
    wordy = sum(len(s) for s in letters if len(s) >= 3 and _VOWEL.search(s))
    return wordy / total


def _alphabet_size(candidate: str) -> int:
    """The size of the alphabet the character classes present imply."""
    size = 52 + (10 if any(char.isdigit() for char in candidate) else 0)
    return size + sum(symbol in candidate for symbol in "+/_-~")


def _entropy_floor(length: int, alphabet: int) -> float:
    """The least entropy per character a random string of this length and alphabet shows."""
    return math.log2(min(length, alphabet)) - _ENTROPY_SLACK


def _entropy(candidate: str) -> float:
    """Shannon entropy per character, in bits."""
    length = len(candidate)
    return -sum(n / length * math.log2(n / length) for n in Counter(candidate).values())


__all__ = ["MAX_LENGTH", "MIN_LENGTH", "looks_random", "looks_random_path"]
