"""Length parsing, validation and per-request sampling: fixed, jittered and distributions."""

from __future__ import annotations

import math
import statistics
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmload.errors import ConfigError
from llmload.workload.lengths import (
    Fixed,
    Jittered,
    LengthDistribution,
    LogNormal,
    Normal,
    Uniform,
    parse_length,
    parse_length_spec,
    require_fraction,
    require_length,
    require_optional_length,
)
from llmload.workload.words import draw, seed_key, unit


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


# -- distributions and their specs --------------------------------------------------------------

UNITS = [i / 20_000 for i in range(20_000)]  # an even grid over [0, 1): exact moments, no noise


def samples(length: LengthDistribution, draws: int = 20_000, seed: int = 1) -> list[int]:
    """Lengths for pseudo-random units, as a run draws them (hashed, not a shared generator)."""
    key = seed_key(seed)
    return [length.sample(unit(draw(key, 0, i))) for i in range(draws)]


def test_fixed_spec_and_int_are_the_same_fixed_length() -> None:
    assert parse_length_spec("--max-tokens", "128", cap=100) == Fixed(128)
    assert parse_length_spec("--max-tokens", 128, cap=100) == Fixed(128)
    assert {Fixed(7).sample(u) for u in (0.0, 0.5, 0.999)} == {7}
    assert Fixed(7).upper == 7


def test_uniform_covers_its_range_evenly_both_ends_included() -> None:
    length = parse_length_spec("--prompt-tokens", "uniform:64:256", cap=100)
    assert length == Uniform(64, 256) and length.upper == 256
    counts = Counter(length.sample(u) for u in UNITS)
    assert min(counts) == 64 and max(counts) == 256 and len(counts) == 193
    assert max(counts.values()) - min(counts.values()) <= 1  # equal slices of the grid
    values = samples(length)
    assert statistics.fmean(values) == pytest.approx(160, rel=0.01)
    assert Uniform(5, 5).sample(0.999) == 5


def test_normal_has_its_mean_and_sd() -> None:
    length = parse_length_spec("--prompt-tokens", "normal:128:32", cap=32768)
    assert length == Normal(128.0, 32.0, 32768)
    values = samples(length)
    assert statistics.fmean(values) == pytest.approx(128, abs=1.0)
    assert statistics.pstdev(values) == pytest.approx(32, rel=0.03)
    assert min(values) >= 1 and max(values) <= 32768


def test_normal_clamps_to_one_and_to_its_cap() -> None:
    length = parse_length_spec("--max-tokens", "normal:10:50:40", cap=32768)
    values = [length.sample(u) for u in UNITS]
    assert min(values) == 1 and max(values) == 40 and length.upper == 40
    assert Normal(10, 50, 40).sample(0.0) == 1  # unit 0 is defined (inv_cdf(0) is not)
    assert Normal(10, 50, 40).sample(1.0 - 2**-53) == 40


def test_lognormal_has_its_median_and_mean() -> None:
    length = parse_length_spec("--max-tokens", "lognormal:128:0.5", cap=32768)
    assert length == LogNormal(128.0, 0.5, 32768)
    values = samples(length)
    assert statistics.median(values) == pytest.approx(128, abs=2)
    assert statistics.fmean(values) == pytest.approx(128 * math.exp(0.5**2 / 2), rel=0.02)


def test_lognormal_takes_the_run_cap_unless_it_has_its_own() -> None:
    assert parse_length_spec("--max-tokens", "lognormal:100:3", cap=500).upper == 500
    capped = parse_length_spec("--max-tokens", "lognormal:100:3:300", cap=500)
    assert max(capped.sample(u) for u in UNITS) == 300
    assert min(capped.sample(u) for u in UNITS) == 1


@pytest.mark.parametrize("spec", ["128", "uniform:1:9", "normal:50:20", "lognormal:50:1"])
def test_sampling_is_deterministic_and_in_bounds(spec: str) -> None:
    length = parse_length_spec("--max-tokens", spec, cap=1000)
    first = samples(length, 2000, seed=3)
    assert first == samples(length, 2000, seed=3)
    assert first != samples(length, 2000, seed=4) or spec == "128"
    assert all(1 <= value <= length.upper for value in first)


@given(unit_=st.floats(min_value=0.0, max_value=1.0, exclude_max=True))
def test_every_distribution_stays_in_bounds_for_any_unit(unit_: float) -> None:
    for length in (Uniform(3, 9), Normal(5, 100, 50), LogNormal(5, 4, 50), Jittered(10, 0.9)):
        assert 1 <= length.sample(unit_) <= length.upper


@pytest.mark.parametrize(
    "spec",
    [
        "0",
        "-1",
        "abc",
        "",
        "1.5",
        "uniform:0:5",
        "uniform:9:3",
        "uniform:5",
        "uniform:a:b",
        "normal:128",
        "normal:0.5:1",
        "normal:128:-1",
        "normal:x:1",
        "normal:128:nan",
        "normal:128:32:64:1",
        "normal:200:1:100",
        "lognormal:128:0.5:0",
        "poisson:3:4",
        "lognormal:inf:1",
    ],
)
def test_bad_specs_name_their_option(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_length_spec("--prompt-tokens", spec, cap=32768)
    assert caught.value.option == "--prompt-tokens"
    assert caught.value.value == spec


def test_a_run_cap_below_the_median_is_refused_naming_the_cap() -> None:
    with pytest.raises(ConfigError, match="--max-length"):
        parse_length_spec("--max-tokens", "lognormal:500:1", cap=100)
    with pytest.raises(ConfigError) as caught:
        parse_length_spec("--max-tokens", "128", cap=0)
    assert caught.value.option == "--max-length"
