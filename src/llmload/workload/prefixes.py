"""Shared system prompts: groups of requests that start with the same prefix.

Production traffic reuses system prompts, and engines with a prefix cache (vLLM's automatic
prefix caching, SGLang's radix cache) skip the prefill of a prefix they have seen, which shows
as a lower TTFT. ``SharedPrefixes`` puts a system prompt of ``tokens`` words in front of every
request of another source:

- with probability ``share`` (drawn per request from the seed) it is the shared prompt of the
  user's group, ``user_index % groups``, and the request is labelled ``("group", "<g>")``;
- otherwise it is a system prompt of the same length that no other request has (its first word
  is a salt unique to the request), labelled ``("group", "none")``.

Both kinds have the same length, so per-group TTFT differs only by what the cache saved. Each
group's prompt starts with its own salt word, so two groups never share even a first block.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.errors import ConfigError
from llmload.workload.prompts import OFFSETS, Prompt, PromptSource
from llmload.workload.words import WordSequence, draw, salt, salted, seed_key, unit

# Labels are bounded by design (each one becomes a TTFT histogram in every stage); a thousand
# groups is already more than any prefix-cache experiment can tell apart.
MAX_GROUPS = 1024
_PREFIX_STREAM = 2  # the seed's stream for prefixes: independent of the prompts' own draws
_UNSHARED = (("group", "none"),)


@dataclass(frozen=True, slots=True)
class PrefixSpec:
    """``--prefix-groups``, ``--prefix-tokens``, ``--prefix-share``; groups 0 turns it off."""

    groups: int = 0
    tokens: int = 512
    share: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.groups, bool) or not 0 <= self.groups <= MAX_GROUPS:
            raise ConfigError("--prefix-groups", self.groups, f"must be 0 (off) to {MAX_GROUPS}")
        if isinstance(self.tokens, bool) or self.tokens < 1:
            raise ConfigError("--prefix-tokens", self.tokens, "must be a positive number of tokens")
        if not 0.0 <= self.share <= 1.0:  # NaN fails too
            problem = "must be a fraction from 0 to 1, e.g. 0.8 for 80% of requests"
            raise ConfigError("--prefix-share", self.share, problem)


class SharedPrefixes:
    """``inner``'s prompts behind a system prompt, shared within a group (module docstring).

    Build one per process: the group prompts and the word sequence are made once, and ``get``
    only slices and concatenates.
    """

    __slots__ = ("_groups", "_inner", "_key", "_labels", "_salt_key", "_spec", "_words")

    def __init__(self, inner: PromptSource, spec: PrefixSpec, seed: int = 0, run_salt: str = "") -> None:
        if spec.groups < 1:
            raise ValueError("SharedPrefixes needs at least one group")  # PrefixSpec(0) is off
        self._inner = inner
        self._spec = spec
        self._key = seed_key(seed, _PREFIX_STREAM)
        self._salt_key = salted(self._key, run_salt)
        self._words = WordSequence(self._key, spec.tokens + OFFSETS)
        # Group salts never equal request salts, and change with the run salt: a group's prompt
        # is shared within a run, never with the run before.
        group_key = salted(seed_key(seed, _PREFIX_STREAM + 1), run_salt)
        self._groups = tuple(
            self._text(salt(group_key, group, 0), group % OFFSETS) for group in range(spec.groups)
        )
        self._labels = tuple((("group", str(group)),) for group in range(spec.groups))

    def system(self, user_index: int, request_index: int) -> tuple[str, tuple[tuple[str, str]]]:
        """The system prompt of this request and its group label."""
        value = draw(self._key, user_index, request_index)
        if unit(value) < self._spec.share:
            group = user_index % self._spec.groups
            return self._groups[group], self._labels[group]
        own = salt(self._salt_key, user_index, request_index)
        return self._text(own, value & (OFFSETS - 1)), _UNSHARED

    def get(self, user_index: int, request_index: int) -> Prompt:
        prompt = self._inner.get(user_index, request_index)
        text, labels = self.system(user_index, request_index)
        first = prompt.messages[0]
        if first["role"] == "system":
            # Some chat templates refuse a second system message: extend the source's own.
            merged = {"role": "system", "content": f"{text}\n\n{first['content']}"}
            messages = (merged, *prompt.messages[1:])
        else:
            messages = ({"role": "system", "content": text}, *prompt.messages)
        requested = prompt.prompt_tokens_requested
        return Prompt(
            messages=messages,
            text=f"{text}\n\n{prompt.text}",
            prompt_tokens_requested=None if requested is None else requested + self._spec.tokens,
            max_tokens=prompt.max_tokens,
            source=prompt.source,
            labels=labels + prompt.labels,
        )

    def _text(self, head: str, offset: int) -> str:
        body = self._words.slice(offset, self._spec.tokens - 1)
        return f"{head} {body}" if body else head
