"""What each request asks: a ``Prompt``, from a ``PromptSource`` (synthetic or a dataset).

Every source answers ``get(user_index, request_index)`` deterministically from its seed and
those two indices alone, never from a shared random generator: the same run on one process or
spread over many workers sends the same prompts, and no user's draw depends on how many
requests other users have made.

Synthetic prompt lengths are counted in whitespace-separated words. The simulator's tokenizer
counts one token per word, so there they are exact. Against a real server they are approximate:
real tokenizers give roughly 1 to 1.4 tokens per English word (the common words used here sit
near 1), the hex salt takes several tokens, and the chat template adds its own. The requested
length travels on each ``Prompt`` so reports can set it beside the server's ``prompt_tokens``.
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

from llmload.workload.lengths import (
    Jittered,
    require_fraction,
    require_length,
    require_optional_length,
)

_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1
# Distinct starting words of the body, so that prompts differ beyond their salt. A power of
# two at most 2**11: the offset takes the hash's low bits, the output length its top 53.
_OFFSETS = 1024

# 100 of the most common English words (after Fry's list): short, and one token each in common
# BPE vocabularies (with their leading space), so words approximate tokens as closely as plain
# text can. A literal tuple: immutable, and nothing is computed at import.
# fmt: off
_VOCABULARY = (
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


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's input and requested output length.

    ``messages`` are shared between requests that get the same prompt: read them, never
    mutate them (the payload builder copies what it needs).
    """

    messages: tuple[dict[str, str], ...]  # for /v1/chat/completions
    text: str  # the same content as one string, for /v1/completions
    prompt_tokens_requested: int | None  # None where nothing asked for a length (datasets)
    max_tokens: int | None  # this request's output length, after jitter; None: server decides
    source: str  # "synthetic" or the dataset's file name
    # bounded workload labels carried to the record, e.g. (("group", "2"),) or (("turn", "3"),)
    labels: tuple[tuple[str, str], ...] = ()


class PromptSource(Protocol):
    """Anything that gives each (user, request) its prompt, deterministically."""

    def get(self, user_index: int, request_index: int) -> Prompt: ...


class SyntheticPrompts:
    """Prompts of ``prompt_tokens`` words from a fixed vocabulary, one user message each.

    Unless ``prefix_cache`` is set, the first word is a salt unique to (user, request), so a
    server's prefix cache cannot turn TTFT into a cache-hit measurement, and the rest starts at
    a per-request offset into a word sequence built once here. With ``prefix_cache`` every
    request sends the same text, to measure the cache-hit case on purpose.

    ``max_tokens`` is spread uniformly over ±``output_jitter`` per request (0.1 is ±10%).
    Build one per process and share it between users: ``get`` only slices prebuilt text.
    """

    __slots__ = ("_key", "_output", "_prompt_tokens", "_shared_text", "_starts", "_text")

    def __init__(
        self,
        prompt_tokens: int,
        max_tokens: int | None,
        output_jitter: float = 0.0,
        seed: int = 0,
        prefix_cache: bool = False,
    ) -> None:
        require_length("--prompt-tokens", prompt_tokens)
        require_optional_length("--max-tokens", max_tokens)
        require_fraction("--output-jitter", output_jitter)
        self._prompt_tokens = prompt_tokens
        self._output = None if max_tokens is None else Jittered(max_tokens, output_jitter)
        self._key = _mix64((seed + 0x9E3779B97F4A7C15) & _MASK64)  # seed 0 must not key 0
        self._text, self._starts = _word_sequence(self._key, prompt_tokens + _OFFSETS)
        self._shared_text = self._slice(0, prompt_tokens) if prefix_cache else None

    def get(self, user_index: int, request_index: int) -> Prompt:
        draw = _mix64(_mix64(self._key ^ (user_index & _MASK64)) ^ (request_index & _MASK64))
        text = self._shared_text
        if text is None:
            salt = f"{_salt(self._key, user_index, request_index):08x}"
            body = self._slice(draw & (_OFFSETS - 1), self._prompt_tokens - 1)
            text = f"{salt} {body}" if body else salt
        max_tokens = None if self._output is None else self._output.sample(_unit(draw))
        return Prompt(
            messages=({"role": "user", "content": text},),
            text=text,
            prompt_tokens_requested=self._prompt_tokens,
            max_tokens=max_tokens,
            source="synthetic",
        )

    def _slice(self, first: int, count: int) -> str:
        """``count`` words from word ``first``, without rebuilding anything but the slice."""
        if count == 0:
            return ""
        # starts[i] is where word i begins; the word before starts[j] ends one space earlier.
        return self._text[self._starts[first] : self._starts[first + count] - 1]


def _word_sequence(key: int, count: int) -> tuple[str, array[int]]:
    """``count`` words drawn from the vocabulary, joined by spaces, and where each starts.

    ``starts`` has ``count + 1`` entries: the last is one past the end plus the missing
    trailing space, so every slice ends with ``starts[j] - 1``.
    """
    # A generator local to this call: the sequence is fixed by the seed and read-only later.
    words = random.Random(key).choices(_VOCABULARY, k=count)
    starts = array("Q", accumulate((len(word) + 1 for word in words), initial=0))
    return " ".join(words), starts


def _salt(key: int, user_index: int, request_index: int) -> int:
    """32 bits unique to (user, request) under this seed.

    The low 16 bits of each index are packed into 32 and passed through a bijection, so salts
    are distinct for every pair of indices below 65,536, guaranteed rather than merely likely
    (a plain 32-bit hash collides by the birthday bound after some 77,000 requests). The high
    bits choose the bijection's key: beyond that range two salts still differ with probability
    1 - 2**-32, and a clash shares only the first word, not the body's offset.
    """
    packed = ((user_index & 0xFFFF) << 16) | (request_index & 0xFFFF)
    high = (((user_index >> 16) & _MASK32) << 32) | ((request_index >> 16) & _MASK32)
    return _mix32(packed ^ (_mix64(key ^ _mix64(high)) & _MASK32))


def _unit(draw: int) -> float:
    """A float in [0, 1) from the top 53 bits of a 64-bit draw (a double's mantissa)."""
    return (draw >> 11) * (1.0 / (1 << 53))


def _mix64(x: int) -> int:
    """splitmix64's finaliser: a bijection on 64-bit integers in which every bit avalanches."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _mix32(x: int) -> int:
    """Wellons' lowbias32: a bijection on 32-bit integers (xorshifts and odd multipliers)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & _MASK32
    return x ^ (x >> 16)
