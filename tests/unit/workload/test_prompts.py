"""Synthetic prompts: exact lengths, distributions, determinism, salts, jitter, prefix-cache mode."""

from __future__ import annotations

import re
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.errors import ConfigError
from llmload.workload.datasets import DatasetPrompts
from llmload.workload.lengths import LogNormal, Normal, Uniform
from llmload.workload.prompts import OutputLengths, Prompt, PromptSource, SyntheticPrompts
from llmload.workload.words import VOCABULARY

SALT = re.compile(r"[0-9a-f]{8}")
# What the implementation before length distributions sent for (user 3, request 5) of seed 0.
PINNED_TEXT = "3214adf7 the of her now are"
PINNED_MAX_TOKENS = 106


@pytest.mark.parametrize("prompt_tokens", [1, 2, 3, 128, 1000, 8192])
@pytest.mark.parametrize("prefix_cache", [False, True])
def test_prompt_has_exactly_the_requested_words(prompt_tokens: int, prefix_cache: bool) -> None:
    source = SyntheticPrompts(prompt_tokens, 64, prefix_cache=prefix_cache)
    for user, request in [(0, 0), (5, 9), (1023, 77777), (2**40, 2**50)]:
        prompt = source.get(user, request)
        assert len(prompt.text.split()) == prompt_tokens
        assert prompt.text == prompt.text.strip()  # no stray spaces at either end
        assert "  " not in prompt.text


def test_prompt_is_one_user_message_with_the_same_text() -> None:
    prompt = SyntheticPrompts(32, 100, seed=3).get(2, 4)
    assert prompt.messages == ({"role": "user", "content": prompt.text},)
    assert prompt.prompt_tokens_requested == 32
    assert prompt.max_tokens == 100
    assert prompt.source == "synthetic"


def test_synthetic_prompts_satisfy_the_protocol() -> None:
    source: PromptSource = SyntheticPrompts(8, None)
    assert isinstance(source.get(0, 0), Prompt)


def test_same_seed_same_prompts_in_any_order() -> None:
    first = SyntheticPrompts(50, 200, output_jitter=0.2, seed=7)
    second = SyntheticPrompts(50, 200, output_jitter=0.2, seed=7)
    pairs = [(user, request) for user in range(20) for request in range(20)]
    forward = [first.get(*pair) for pair in pairs]
    backward = [second.get(*pair) for pair in reversed(pairs)][::-1]
    assert forward == backward
    assert [first.get(*pair) for pair in pairs] == forward  # no state advanced by calls


def test_different_seeds_give_different_prompts() -> None:
    a = SyntheticPrompts(50, 200, output_jitter=0.2, seed=1)
    b = SyntheticPrompts(50, 200, output_jitter=0.2, seed=2)
    assert all(a.get(0, r).text != b.get(0, r).text for r in range(100))
    a_cached = SyntheticPrompts(50, None, seed=1, prefix_cache=True)
    b_cached = SyntheticPrompts(50, None, seed=2, prefix_cache=True)
    assert a_cached.get(0, 0).text != b_cached.get(0, 0).text


def test_salts_are_unique_across_users_and_requests() -> None:
    source = SyntheticPrompts(4, None, seed=11)
    salts = set()
    pairs = [(user, request) for user in range(260) for request in range(260)]
    for user, request in pairs:
        salt = source.get(user, request).text.split()[0]
        assert SALT.fullmatch(salt)
        salts.add(salt)
    assert len(salts) == len(pairs)  # 67,600 pairs: a plain 32-bit hash would likely collide


def test_salts_differ_beyond_the_guaranteed_range() -> None:
    source = SyntheticPrompts(4, None)
    # These would alias if the indices were merely packed into 32 bits.
    pairs = [(0, 65536), (1, 0), (65536, 0), (0, 1), (2**40, 3), (3, 2**40)]
    assert len({source.get(*pair).text.split()[0] for pair in pairs}) == len(pairs)


def test_bodies_differ_between_requests_not_only_salts() -> None:
    source = SyntheticPrompts(64, None)
    bodies = {source.get(0, request).text.split(" ", 1)[1] for request in range(200)}
    assert len(bodies) > 150  # offsets drawn from 1024: a few repeats, by the birthday bound


def test_prefix_cache_sends_one_shared_prompt_without_salt() -> None:
    source = SyntheticPrompts(100, 50, output_jitter=0.5, prefix_cache=True)
    prompts = [source.get(user, request) for user in range(10) for request in range(10)]
    assert len({prompt.text for prompt in prompts}) == 1
    assert not SALT.fullmatch(prompts[0].text.split()[0])
    assert len({prompt.max_tokens for prompt in prompts}) > 1  # jitter still applies


def test_words_come_from_the_vocabulary() -> None:
    shared = SyntheticPrompts(500, None, prefix_cache=True).get(0, 0).text.split()
    salted = SyntheticPrompts(500, None).get(3, 4).text.split()
    assert set(shared) <= set(VOCABULARY)
    assert set(salted[1:]) <= set(VOCABULARY)


def test_output_jitter_stays_in_band_with_the_right_mean() -> None:
    source = SyntheticPrompts(4, 200, output_jitter=0.1, seed=5)
    pairs = [(user, request) for user in range(100) for request in range(200)]
    lengths = [source.get(*pair).max_tokens for pair in pairs]
    values = [length for length in lengths if length is not None]
    assert len(values) == len(lengths)
    assert min(values) >= 180
    assert max(values) <= 220
    assert min(values) <= 181
    assert max(values) >= 219
    assert statistics.fmean(values) == pytest.approx(200, rel=0.005)
    # Uniform over 41 values: every one of them turns up.
    assert len(set(values)) == 41


def test_no_jitter_and_no_max_tokens() -> None:
    assert {SyntheticPrompts(4, 300).get(u, 0).max_tokens for u in range(50)} == {300}
    assert SyntheticPrompts(4, None, output_jitter=0.5).get(0, 0).max_tokens is None


def test_tiny_outputs_never_drop_below_one_token() -> None:
    source = SyntheticPrompts(4, 1, output_jitter=0.99)
    assert {source.get(0, request).max_tokens for request in range(500)} == {1, 2}


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"prompt_tokens": 0, "max_tokens": 10}, "--prompt-tokens"),
        ({"prompt_tokens": -5, "max_tokens": 10}, "--prompt-tokens"),
        ({"prompt_tokens": 10, "max_tokens": 0}, "--max-tokens"),
        ({"prompt_tokens": 10, "max_tokens": -1}, "--max-tokens"),
        ({"prompt_tokens": 10, "max_tokens": 10, "output_jitter": 1.0}, "--output-jitter"),
        ({"prompt_tokens": 10, "max_tokens": 10, "output_jitter": -0.1}, "--output-jitter"),
    ],
)
def test_bad_options_name_themselves(kwargs: dict[str, float], option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        SyntheticPrompts(**kwargs)  # type: ignore[arg-type]
    assert caught.value.option == option
    assert str(caught.value).startswith(f"{option}=")


@settings(max_examples=150, deadline=None)
@given(
    prompt_tokens=st.integers(min_value=1, max_value=4096),
    user=st.integers(min_value=0, max_value=2**32),
    request=st.integers(min_value=0, max_value=2**32),
    seed=st.integers(min_value=0, max_value=2**64),
    prefix_cache=st.booleans(),
)
def test_any_length_gives_exactly_that_many_words(
    prompt_tokens: int, user: int, request: int, seed: int, prefix_cache: bool
) -> None:
    source = SyntheticPrompts(prompt_tokens, None, seed=seed, prefix_cache=prefix_cache)
    assert len(source.get(user, request).text.split()) == prompt_tokens


def test_fixed_lengths_send_the_same_prompts_as_before_distributions() -> None:
    # Pinned: a seed names a workload, so runs stay comparable across llmload versions.
    prompt = SyntheticPrompts(6, 100, output_jitter=0.1, seed=0).get(3, 5)
    assert prompt.text == PINNED_TEXT
    assert prompt.max_tokens == PINNED_MAX_TOKENS


@pytest.mark.parametrize("length", [Uniform(5, 300), Normal(80, 30, 400), LogNormal(60, 0.8, 500)])
@pytest.mark.parametrize("prefix_cache", [False, True])
def test_sampled_prompt_lengths_are_the_words_sent(length: Uniform, prefix_cache: bool) -> None:
    source = SyntheticPrompts(length, 16, seed=9, prefix_cache=prefix_cache)
    lengths = []
    for user, request in [(u, r) for u in range(20) for r in range(50)]:
        prompt = source.get(user, request)
        assert prompt.prompt_tokens_requested is not None
        assert len(prompt.text.split()) == prompt.prompt_tokens_requested <= length.upper
        lengths.append(prompt.prompt_tokens_requested)
    assert len(set(lengths)) > 20  # it varies per request


def test_prompt_and_output_lengths_are_drawn_independently() -> None:
    source = SyntheticPrompts(Uniform(1, 100), Uniform(1, 100), seed=2)
    pairs = [
        (p.prompt_tokens_requested, p.max_tokens)
        for p in (source.get(u, r) for u in range(40) for r in range(100))
    ]
    xs = [float(x or 0) for x, _ in pairs]
    ys = [float(y or 0) for _, y in pairs]
    assert abs(statistics.correlation(xs, ys)) < 0.05
    assert statistics.fmean(ys) == pytest.approx(50.5, rel=0.03)


def test_prefix_cache_with_sampled_lengths_shares_one_text_start() -> None:
    source = SyntheticPrompts(Uniform(10, 50), None, prefix_cache=True)
    texts = [source.get(0, r).text for r in range(100)]
    longest = max(texts, key=len)
    assert all(longest.startswith(text) for text in texts)


def test_output_distribution_takes_no_jitter() -> None:
    with pytest.raises(ConfigError) as caught:
        SyntheticPrompts(10, Uniform(1, 9), output_jitter=0.1)
    assert caught.value.option == "--output-jitter"
    assert {SyntheticPrompts(10, Uniform(3, 3)).get(0, r).max_tokens for r in range(10)} == {3}


def test_output_lengths_replace_a_datasets_max_tokens_per_request() -> None:
    fixed = Prompt(({"role": "user", "content": "hi"},), "hi", None, None, "d.jsonl")
    source = OutputLengths(DatasetPrompts("d.jsonl", (fixed,)), Uniform(10, 20), seed=1)
    drawn = [source.get(u, r) for u in range(10) for r in range(30)]
    assert all(p.messages is fixed.messages for p in drawn)
    assert {p.max_tokens for p in drawn} == set(range(10, 21))
    assert [p.max_tokens for p in drawn] == [
        source.get(u, r).max_tokens for u in range(10) for r in range(30)
    ]
