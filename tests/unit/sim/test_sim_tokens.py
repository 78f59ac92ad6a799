"""The word tokenizer, output planning and the seeded generator."""

from __future__ import annotations

import pytest

from llmload.sim.tokens import (
    VOCABULARY,
    SplitMix64,
    TokenText,
    chat_prompt_tokens,
    plan_output,
    request_rng,
)


def test_chat_template_overhead() -> None:
    assert chat_prompt_tokens(128, 1) == 134
    assert chat_prompt_tokens(10, 2) == 10 + 6 + 3


def test_ignore_eos_always_runs_to_max_tokens() -> None:
    for i in range(50):
        plan = plan_output(request_rng(0, str(i).encode()), 40, 0, True)
        assert (plan.tokens, plan.finish_reason) == (40, "length")


def test_eos_is_seeded_and_respects_min_tokens() -> None:
    plans = [plan_output(request_rng(1, str(i).encode()), 40, 10, False) for i in range(300)]
    assert all(10 <= p.tokens <= 40 for p in plans)
    assert all((p.finish_reason == "length") == (p.tokens == 40) for p in plans)
    stops = sum(p.finish_reason == "stop" for p in plans)
    assert 0.25 < stops / len(plans) < 0.6
    again = [plan_output(request_rng(1, str(i).encode()), 40, 10, False) for i in range(300)]
    assert plans == again


def test_text_is_words_one_per_token() -> None:
    text = TokenText.seeded(request_rng(3, b"x"))
    words = text.text(0, 50)
    assert len(words.split()) == 50
    assert words.startswith(" ")
    assert text.text(10, 5) == words[len(text.text(0, 10)) :][: len(text.text(10, 5))]


def test_generator_is_fixed_by_its_seed() -> None:
    a, b = SplitMix64(42), SplitMix64(42)
    seq = [a.next() for _ in range(5)]
    assert seq == [b.next() for _ in range(5)]
    assert len(set(seq)) == 5
    assert all(0 <= SplitMix64(i).below(len(VOCABULARY)) < len(VOCABULARY) for i in range(100))
    assert request_rng(1, b"a").next() != request_rng(2, b"a").next()
    assert request_rng(1, b"a").next() != request_rng(1, b"b").next()


@pytest.mark.parametrize("word", VOCABULARY)
def test_vocabulary_needs_no_json_escaping(word: str) -> None:
    assert word.startswith(" ") and word[1:].isalpha() and word.isascii()


def test_split_words_counts_a_fixed_number_of_tokens_per_word_and_keeps_prefixes() -> None:
    from fractions import Fraction

    from llmload.sim.tokens import split_words

    words = [f"w{i}" for i in range(100)]
    per_word = Fraction(13, 10)
    tokens = split_words(words, per_word)
    assert len(tokens) == 130 and tokens[:2] == ["w0", "w1"]
    for n in range(100):
        assert len(split_words(words[:n], per_word)) == n * 13 // 10
        assert tokens[: len(split_words(words[:n], per_word))] == split_words(words[:n], per_word)
    assert split_words(words, Fraction(1)) == words
