"""``--tokenize``'s calibration: a line through the generator's prompts, and the template's share."""

from __future__ import annotations

import math

import pytest

from llmload.errors import ConfigError
from llmload.workload.prompts import SyntheticPrompts
from llmload.workload.scale import TokenScale, calibrate


def sample(words: int, index: int) -> str:
    return SyntheticPrompts(words, None, seed=1, run_salt="t").get(0, index).text


def bpe_like(text: str) -> int:
    """1.3 tokens per word, 4 for the hex salt, and a BOS."""
    return 1 + 4 + math.floor(1.3 * (len(text.split()) - 1))


def test_calibration_finds_tokens_per_word_and_what_the_template_adds() -> None:
    scale, warning = calibrate(bpe_like, sample, lambda text: bpe_like(text) + 9)
    assert warning is None
    assert scale.per_word == pytest.approx(1.3, abs=0.005)
    # BOS + salt - one word's share + the template's 9
    assert scale.fixed == pytest.approx(1 + 4 - 1.3 + 9, abs=1)
    for tokens in (64, 512, 4000):
        words = scale.words_for(tokens)
        assert bpe_like(sample(words, 7)) + 9 == pytest.approx(tokens, abs=2)


def test_without_usage_the_template_is_left_out_and_said() -> None:
    scale, warning = calibrate(bpe_like, sample, lambda text: None)
    assert warning is not None and "usage.prompt_tokens" in warning
    assert scale.fixed == pytest.approx(1 + 4 - 1.3, abs=1)


def test_a_scale_gives_at_least_one_word_and_needs_tokens_per_word() -> None:
    assert TokenScale(1.3, 40.0).words_for(10) == 1
    with pytest.raises(ConfigError, match="--tokenize"):
        TokenScale(0.0, 0.0)


def test_scaled_prompts_ask_tokens_and_send_words() -> None:
    prompts = SyntheticPrompts(500, 8, seed=1, scale=TokenScale(1.25, 6.0))
    prompt = prompts.get(0, 0)
    assert prompt.prompt_tokens_requested == 500
    assert len(prompt.text.split()) == round((500 - 6) / 1.25)
