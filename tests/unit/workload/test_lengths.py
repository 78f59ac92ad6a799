"""Length parsing, validation and per-request sampling."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.workload.lengths import (
    Jittered,
    parse_length,
    require_fraction,
    require_length,
    require_optional_length,
)


@pytest.mark.parametrize(("text", "expected"), [("128", 128), (" 64\n", 64), ("1", 1)])
def test_parse_length_accepts_positive_integers(text: str, expected: int) -> None:
    assert parse_length("--prompt-tokens", text) == expected


@pytest.mark.parametrize("text", ["0", "-1", "+5", "1.5", "abc", "", "  ", "1_000", "١٢", "1e3"])
def test_parse_length_refuses_anything_else_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_length("--prompt-tokens", text)
    assert caught.value.option == "--prompt-tokens"
    assert caught.value.value == text
    assert "positive whole number" in caught.value.problem


@pytest.mark.parametrize("value", [0, -3, True, 2.0])
def test_require_length_refuses_non_positive_and_non_int(value: object) -> None:
    with pytest.raises(ConfigError, match="--max-tokens"):
        require_length("--max-tokens", value)  # type: ignore[arg-type]


def test_require_optional_length_lets_none_through() -> None:
    require_optional_length("--max-tokens", None)
    with pytest.raises(ConfigError):
        require_optional_length("--max-tokens", 0)


@pytest.mark.parametrize("value", [0.0, 0.1, 0.999, 0])
def test_require_fraction_accepts_zero_up_to_one(value: float) -> None:
    require_fraction("--output-jitter", value)


@pytest.mark.parametrize("value", [1.0, 1.5, -0.1, float("nan"), float("inf"), True])
def test_require_fraction_refuses_the_rest(value: float) -> None:
    with pytest.raises(ConfigError) as caught:
        require_fraction("--output-jitter", value)
    assert caught.value.option == "--output-jitter"


def test_jittered_without_fraction_is_fixed() -> None:
    assert {Jittered(100).sample(unit) for unit in (0.0, 0.3, 0.999)} == {100}


def test_jittered_spans_the_band_symmetrically() -> None:
    length = Jittered(200, 0.1)
    assert length.sample(0.0) == 180
    assert length.sample(0.5) == 200
    assert length.sample(1.0 - 2**-53) == 220


def test_jittered_never_goes_below_one() -> None:
    assert Jittered(1, 0.9).sample(0.0) == 1
