"""The raw material of synthetic prompts: seeded per-request draws, salts and word sequences.

Every random choice in a workload is a pure function of (seed, user, request): a 64-bit draw
mixed from those three numbers, never a shared random generator. A request's prompt, lengths and
prefix group are then the same whichever process sends it and however many requests other users
sent before it, which is what makes a distributed run reproducible.

Words are the unit of synthetic text: the simulator counts one token per whitespace-separated
word, and the common English words used here are one token each in common BPE vocabularies.
"""

from __future__ import annotations

import hashlib
import random
from array import array
from itertools import accumulate

MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1
_GOLDEN = 0x9E3779B97F4A7C15

# 100 of the most common English words (after Fry's list): short, and one token each in common
# BPE vocabularies (with their leading space), so words approximate tokens as closely as plain
# text can. A literal tuple: immutable, and nothing is computed at import.
# fmt: off
VOCABULARY = (
    "the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on", "are",
    "as", "with", "his", "they", "at", "be", "this", "have", "from", "or", "one", "had", "by",
    "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said", "there",
    "use", "an", "each", "which", "she", "do", "how", "their", "if", "will", "up", "other",
    "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make", "like",
    "him", "into", "time", "has", "look", "two", "more", "write", "go", "see", "number", "no",
    "way", "could", "people", "my", "than", "first", "water", "been", "call", "who", "oil", "its",
    "now", "find", "long", "down", "day", "did", "get", "come", "made", "may", "part", "over",
    "new",
)
# fmt: on


def seed_key(seed: int, stream: int = 0) -> int:
    """A 64-bit key for one use of the seed; ``stream`` separates uses (prompts, prefixes)."""
    # The golden-ratio offset keeps seed 0 from keying 0, whose draws would be weaker.
    return mix64((seed + _GOLDEN * (stream + 1)) & MASK64)


def salted(key: int, run_salt: str) -> int:
    """``key`` for the salts of one run: a different run salt gives different salt words while
    every length, offset and order drawn from the seed stays the same. "" leaves it as it is."""
    if not run_salt:
        return key
    return mix64(key ^ int.from_bytes(hashlib.blake2b(run_salt.encode(), digest_size=8).digest()))


def draw(key: int, user_index: int, request_index: int) -> int:
    """64 well-mixed bits for one (user, request) under ``key``."""
    return mix64(mix64(key ^ (user_index & MASK64)) ^ (request_index & MASK64))


def substream(value: int, stream: int) -> int:
    """An independent draw derived from ``value``, for a second choice of the same request."""
    return mix64(value ^ ((_GOLDEN * stream) & MASK64))


def unit(value: int) -> float:
    """A float in [0, 1) from the top 53 bits of a 64-bit draw (a double's mantissa)."""
    return (value >> 11) * (1.0 / (1 << 53))


def salt(key: int, user_index: int, request_index: int) -> str:
    """8 hex digits unique to (user, request) under this key.

    The low 16 bits of each index are packed into 32 and passed through a bijection, so salts
    are distinct for every pair of indices below 65,536, guaranteed rather than merely likely
    (a plain 32-bit hash collides by the birthday bound after some 77,000 requests). The high
    bits choose the bijection's key: beyond that range two salts still differ with probability
    1 - 2**-32, and a clash shares only the first word, not the body's offset.
    """
    packed = ((user_index & 0xFFFF) << 16) | (request_index & 0xFFFF)
    high = (((user_index >> 16) & _MASK32) << 32) | ((request_index >> 16) & _MASK32)
    return f"{mix32(packed ^ (mix64(key ^ mix64(high)) & _MASK32)):08x}"


class WordSequence:
    """``count`` seeded words from the vocabulary, built once, sliced without copying words.

    Read-only after construction, so one instance serves every user of a process.
    """

    __slots__ = ("_starts", "_text", "count")

    def __init__(self, key: int, count: int) -> None:
        # A generator local to this call: the sequence is fixed by the key and read-only later.
        words = random.Random(key).choices(VOCABULARY, k=count)
        self.count = count
        self._text = " ".join(words)
        # starts[i] is where word i begins; the last entry is one past the end plus the missing
        # trailing space, so every slice ends at starts[j] - 1.
        self._starts = array("Q", accumulate((len(word) + 1 for word in words), initial=0))

    def slice(self, first: int, count: int) -> str:
        """``count`` words from word ``first`` (``first + count <= self.count``)."""
        if count <= 0:
            return ""
        return self._text[self._starts[first] : self._starts[first + count] - 1]


def filler(count: int) -> str:
    """``count`` vocabulary words in a fixed order: text whose only property that matters is
    its length (a stand-in for a reply the client did not keep)."""
    whole, rest = divmod(max(count, 0), len(VOCABULARY))
    return " ".join(VOCABULARY * whole + VOCABULARY[:rest])


def mix64(x: int) -> int:
    """splitmix64's finaliser: a bijection on 64-bit integers in which every bit avalanches."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mix32(x: int) -> int:
    """Wellons' lowbias32: a bijection on 32-bit integers (xorshifts and odd multipliers)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & _MASK32
    return x ^ (x >> 16)
