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

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from llmload.workload.lengths import (
    Fixed,
    Jittered,
    LengthDistribution,
    require_length,
    require_optional_length,
    require_output_jitter,
)
from llmload.workload.scale import TokenScale
from llmload.workload.words import WordSequence, draw, salt, salted, seed_key, substream, unit

# Distinct starting words of the body, so that prompts differ beyond their salt. A power of
# two at most 2**11: the offset takes the draw's low bits, the output length its top 53.
OFFSETS = 1024
_PROMPT_LENGTH_STREAM = 1  # the prompt length's draw: independent of the output length's


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's input and requested output length.

    ``messages`` are shared between requests that get the same prompt: read them, never
    mutate them (the payload builder copies what it needs).
    """

    messages: tuple[Mapping[str, object], ...]  # for /v1/chat/completions, sent as they are
    text: str  # the same content as one string, for /v1/completions
    prompt_tokens_requested: int | None  # None where nothing asked for a length (datasets)
    max_tokens: int | None  # this request's output length, after jitter; None: server decides
    source: str  # "synthetic" or the dataset's file name
    # bounded workload labels carried to the record, e.g. (("group", "2"),) or (("turn", "3"),)
    labels: tuple[tuple[str, str], ...] = ()
    images: int = 0  # image_url parts in the last user message (workload/images.py)
    image_bytes: int = 0  # their encoded files' bytes


def text_of(message: Mapping[str, object]) -> str:
    """A chat message's text: its content, or the text parts of a content list (images)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return " ".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


class PromptSource(Protocol):
    """Anything that gives each (user, request) its prompt, deterministically."""

    def get(self, user_index: int, request_index: int) -> Prompt: ...


class SyntheticPrompts:
    """Prompts of a sampled number of words from a fixed vocabulary, one user message each.

    ``prompt_tokens`` and ``max_tokens`` are a fixed length or a ``LengthDistribution``
    (``lengths.parse_length_spec``); a fixed ``max_tokens`` is spread uniformly over
    ±``output_jitter`` per request (0.1 is ±10%), a distribution takes no jitter.

    Unless ``prefix_cache`` is set, the first word is a salt unique to (user, request) and to
    the run (``run_salt``), so a server's prefix cache cannot turn TTFT into a cache-hit
    measurement, not even on the second of two identical runs, and the rest starts at
    a per-request offset into a word sequence built once here. With ``prefix_cache`` every
    request sends the start of the same text (the same text when the length is fixed), to
    measure the cache-hit case on purpose.

    With ``scale`` (``--tokenize``) the lengths are the server's tokens, the chat template's
    included: each prompt gets the words ``scale`` says the server counts as that many.

    Build one per process and share it between users: ``get`` only slices prebuilt text.
    """

    __slots__ = ("_key", "_output", "_prefix_cache", "_prompt", "_salt_key", "_scale", "_words")

    def __init__(
        self,
        prompt_tokens: int | LengthDistribution,
        max_tokens: int | LengthDistribution | None,
        output_jitter: float = 0.0,
        seed: int = 0,
        prefix_cache: bool = False,
        *,
        run_salt: str = "",
        scale: TokenScale | None = None,
    ) -> None:
        fixed_output = max_tokens is None or isinstance(max_tokens, int)
        require_output_jitter(output_jitter, not fixed_output)
        self._prompt = _length("--prompt-tokens", prompt_tokens)
        self._output: LengthDistribution | None
        if max_tokens is None or isinstance(max_tokens, int):
            require_optional_length("--max-tokens", max_tokens)
            self._output = None if max_tokens is None else Jittered(max_tokens, output_jitter)
        else:
            self._output = max_tokens
        self._key = seed_key(seed)
        self._salt_key = salted(self._key, run_salt)
        self._scale = scale
        longest = (
            self._prompt.upper
            if scale is None
            else max(self._prompt.upper, scale.words_for(self._prompt.upper))
        )
        self._words = WordSequence(self._key, longest + OFFSETS)
        self._prefix_cache = prefix_cache

    def get(self, user_index: int, request_index: int) -> Prompt:
        value = draw(self._key, user_index, request_index)
        asked = words = self._prompt.sample(unit(substream(value, _PROMPT_LENGTH_STREAM)))
        if self._scale is not None:
            words = self._scale.words_for(asked)
        if self._prefix_cache:
            text = self._words.slice(0, words)
        else:
            body = self._words.slice(value & (OFFSETS - 1), words - 1)
            head = salt(self._salt_key, user_index, request_index)
            text = f"{head} {body}" if body else head
        return Prompt(
            messages=({"role": "user", "content": text},),
            text=text,
            prompt_tokens_requested=asked,
            max_tokens=None if self._output is None else self._output.sample(unit(value)),
            source="synthetic",
        )


class OutputLengths:
    """Another source's prompts with output lengths drawn from ``lengths`` per request.

    For datasets given a ``--max-tokens`` distribution: the dataset picks the messages, the
    distribution the output length, each request drawing its own.
    """

    __slots__ = ("_inner", "_key", "_lengths")

    def __init__(self, inner: PromptSource, lengths: LengthDistribution, seed: int = 0) -> None:
        self._inner = inner
        self._lengths = lengths
        self._key = seed_key(seed)

    def get(self, user_index: int, request_index: int) -> Prompt:
        prompt = self._inner.get(user_index, request_index)
        tokens = self._lengths.sample(unit(draw(self._key, user_index, request_index)))
        return dataclasses.replace(prompt, max_tokens=tokens)


def _length(option: str, value: int | LengthDistribution) -> LengthDistribution:
    if isinstance(value, int):
        require_length(option, value)
        return Fixed(value)
    return value
