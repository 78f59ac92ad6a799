"""The one place a run's ``WorkloadConfig`` becomes the ``PromptSource`` its users draw from.

Sources compose: a dataset or synthetic prompts, each drawing its own output length when
``--max-tokens`` is a distribution, then optionally behind shared system prompts. Multi-turn
conversations (``conversations.py``) are built over whatever this returns.
"""

from __future__ import annotations

import logging

from llmload.config.asked import WorkloadConfig
from llmload.config.settings import RunConfig
from llmload.target.tokenize import token_scale
from llmload.workload.datasets import load_dataset
from llmload.workload.images import ImagePool, ImagePrompts
from llmload.workload.prefixes import SharedPrefixes
from llmload.workload.prompts import OutputLengths, PromptSource, SyntheticPrompts
from llmload.workload.scale import TokenScale


def prompt_source(w: WorkloadConfig, scale: TokenScale | None = None) -> PromptSource:
    """Build once per process and share between users (reads a dataset, builds word text).
    ``scale``: ``--tokenize``'s calibration, synthetic lengths in the server's tokens."""
    source: PromptSource
    if w.dataset is not None:
        # An explicit fixed --max-tokens applies to every prompt; a distribution draws per request.
        fixed = w.max_tokens if w.output_lengths is None else None
        source = load_dataset(w.dataset, max_tokens=fixed, seed=w.seed)
        if w.output_lengths is not None:
            source = OutputLengths(source, w.output_lengths, w.seed)
    else:
        prompts = w.prompt_tokens if w.prompt_lengths is None else w.prompt_lengths
        outputs = w.max_tokens if w.output_lengths is None else w.output_lengths
        source = SyntheticPrompts(
            prompts, outputs, w.output_jitter, w.seed, w.prefix_cache, run_salt=w.salt, scale=scale
        )
    if w.prefix.groups:
        source = SharedPrefixes(source, w.prefix, w.seed, w.salt)
    if w.images.count:
        source = ImagePrompts(source, ImagePool(w.images, w.seed, w.salt))
    return source


def calibrated_source(config: RunConfig, model: str, verify: bool | str) -> tuple[PromptSource, str | None]:
    """``--tokenize``: the prompt source with lengths in the server's tokens, calibrated now
    against the server (or a tokenizer.json) on the generator's own prompts, under a salt of
    their own; and a warning when the template's tokens could not be measured."""
    w = config.workload
    request = config.request
    headers = dict(request.extra_headers)
    if request.api_key:
        headers["Authorization"] = f"Bearer {request.api_key}"

    def sample(words: int, index: int) -> str:
        return SyntheticPrompts(words, None, seed=w.seed, run_salt=f"{w.salt}/tokenize").get(0, index).text

    scale, warning = token_scale(w.tokenize, config.host, model, sample, headers=headers, verify=verify)
    logging.getLogger(__name__).info("--tokenize %s: %s", w.tokenize, scale.describe())
    return prompt_source(w, scale), warning


class SyntheticTexts:
    """Scenarios' ``self.text(n)``: synthetic text of any length, the ``index``-th of a user's
    salted apart (under a salt of its own, so it shares no first word with any prompt); one
    word sequence per length, built on first use and shared by the process's users."""

    def __init__(self, w: WorkloadConfig) -> None:
        self._w = w
        self._by_length: dict[int, SyntheticPrompts] = {}

    def get(self, tokens: int, user_index: int, index: int) -> str:
        source = self._by_length.get(tokens)
        if source is None:
            w = self._w
            source = SyntheticPrompts(tokens, None, seed=w.seed, run_salt=f"{w.salt}/text")
            self._by_length[tokens] = source
        return source.get(user_index, index).text
