"""The simulator's tokenizer: words are tokens.

A real tokenizer would cost microseconds per request and tie the simulator to one model; a word
rule is free, deterministic, and easy for a client to predict. The rule, relied on by the client's
synthetic prompts:

- prompt tokens = whitespace-separated words over every message content (chat) or over the
  prompt (completions);
- chat adds a template overhead of ``TOKENS_PER_MESSAGE`` per message plus ``TOKENS_PER_CHAT``,
  as real chat templates do, so a chat request's received prompt length exceeds the words sent.
  The template is ChatML-like and its tokens have a place in the sequence (the prefix cache
  hashes it): each message opens with ``<|im_start|>``, its role and a newline before its words,
  and the prompt ends with the same opening for the assistant's reply;
- output tokens are words, each rendered with a leading space (`` tok``), so the words of a
  response's text equal its ``usage.completion_tokens``.

``--tokens-per-word F`` makes prompts count like a real tokenizer's (about 1.3 tokens per English
word): a text of W words is ``floor(W * F)`` tokens (``split_words``), which a client must
calibrate for (``llmload --tokenize``); template tokens and output tokens stay as they are.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from fractions import Fraction

TOKENS_PER_MESSAGE = 3
TOKENS_PER_CHAT = 3
_OPEN = "<|im_start|>"
_NEWLINE = "\n"  # a template token: no word of a whitespace-split text can equal it

Token = str | int  # a word, or a token id of a completions prompt sent as a list of ids
_MASK64 = (1 << 64) - 1

# Short ASCII words: nothing to JSON-escape, so chunks can be rendered by concatenation.
_WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when "
    "if so no will more out up into do any your what time can said about other than them "
    "then its only new some could these two may first like now my over such our man me "
    "even most made after also did many off before must through back years where much way"
)
VOCABULARY: tuple[str, ...] = tuple(" " + word for word in _WORDS.split())


def chat_prompt_tokens(words: int, messages: int) -> int:
    """Prompt tokens of a chat request whose messages hold ``words`` words in total."""
    return words + TOKENS_PER_MESSAGE * messages + TOKENS_PER_CHAT


def count_words(text: str) -> int:
    return len(text.split())


def split_words(words: list[str], per_word: Fraction) -> list[Token]:
    """The tokens of ``words`` at ``per_word`` tokens per word: word ``i`` gives
    ``floor((i + 1) F) - floor(i F)`` pieces, so W words are ``floor(W F)`` tokens and the tokens
    of a prefix of the words are a prefix of the tokens (the prefix cache relies on it)."""
    if per_word == 1:
        return list(words)
    p, q = per_word.numerator, per_word.denominator
    tokens: list[Token] = []
    for i, word in enumerate(words):
        pieces = (i + 1) * p // q - i * p // q
        tokens += [word] + [f"{word}##{k}" for k in range(1, pieces)] if pieces else []
    return tokens


def message_open(role: str) -> tuple[str, str, str]:
    """The ``TOKENS_PER_MESSAGE`` template tokens in front of a message's words."""
    return (_OPEN, role, _NEWLINE)


# What follows the last message: the opening of the reply the model is to write.
GENERATION_PROMPT: tuple[str, str, str] = message_open("assistant")


@dataclass(frozen=True, slots=True)
class OutputPlan:
    """How many tokens one request will generate and why it stops."""

    tokens: int
    finish_reason: str  # "length" or "stop"


class SplitMix64:
    """A tiny seeded generator (SplitMix64): a few integer operations per draw.

    ``random.Random`` costs microseconds to seed, per request; this costs nothing, and its
    sequence is fixed by its definition, not by a library version.
    """

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK64

    def next(self) -> int:
        self._state = z = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """An integer in ``[0, n)`` (the modulo bias is below 2**-40 for the n used here)."""
        return self.next() % n


def request_rng(seed: int, key: bytes) -> SplitMix64:
    """A generator that depends only on the simulator's seed and the request's content.

    Keyed by content rather than arrival order, so concurrent clients get the same answers for
    the same requests whatever order they arrive in.
    """
    return SplitMix64((seed & 0xFFFFFFFF) << 32 | zlib.crc32(key))


def plan_output(rng: SplitMix64, max_tokens: int, min_tokens: int, ignore_eos: bool) -> OutputPlan:
    """Choose the output length: ``max_tokens`` under ``ignore_eos``, else a seeded EOS.

    The EOS position is uniform on ``[max(min_tokens, 1), 2 * max_tokens]``, so about half of the
    requests without ``ignore_eos`` stop early with ``finish_reason == "stop"``.
    """
    if ignore_eos:
        return OutputPlan(max_tokens, "length")
    low = max(min_tokens, 1)
    eos_at = low + rng.below(2 * max_tokens - low + 1)
    if eos_at < max_tokens:
        return OutputPlan(eos_at, "stop")
    return OutputPlan(max_tokens, "length")


@dataclass(frozen=True, slots=True)
class TokenText:
    """The words of one response: token ``i`` is ``VOCABULARY[(start + i * stride) % size]``.

    An arithmetic walk instead of one random draw per token keeps the per-event cost to an index.
    """

    start: int
    stride: int

    @classmethod
    def seeded(cls, rng: SplitMix64) -> TokenText:
        size = len(VOCABULARY)
        stride = 1 + rng.below(size - 1)
        while math.gcd(stride, size) != 1:
            stride += 1
        return cls(rng.below(size), stride)

    def index(self, i: int) -> int:
        return (self.start + i * self.stride) % len(VOCABULARY)

    def text(self, first: int, count: int) -> str:
        """Tokens ``first .. first + count - 1`` as text."""
        return "".join(VOCABULARY[self.index(i)] for i in range(first, first + count))
