"""The one place a run's ``WorkloadConfig`` becomes the ``PromptSource`` its users draw from.

Sources compose: a dataset or synthetic prompts, each drawing its own output length when
``--max-tokens`` is a distribution, then optionally behind shared system prompts. Multi-turn
conversations (``conversations.py``) are built over whatever this returns.
"""

from __future__ import annotations

from llmload.config import WorkloadConfig
from llmload.workload.datasets import load_dataset
from llmload.workload.prefixes import SharedPrefixes
from llmload.workload.prompts import OutputLengths, PromptSource, SyntheticPrompts


def prompt_source(w: WorkloadConfig) -> PromptSource:
    """Build once per process and share between users (reads a dataset, builds word text)."""
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
        source = SyntheticPrompts(prompts, outputs, w.output_jitter, w.seed, w.prefix_cache, run_salt=w.salt)
    if w.prefix.groups:
        source = SharedPrefixes(source, w.prefix, w.seed, w.salt)
    return source


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
