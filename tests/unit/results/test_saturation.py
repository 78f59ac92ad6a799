"""The saturation detector over synthetic headline levels."""

from __future__ import annotations

import pytest

from llmload.results.saturation import detect
from llmload.results.summary import Level


def level(
    c: int | None,
    tok: float,
    *,
    tpot: float | None = 20.0,
    ttft: float | None = 100.0,
    spread: tuple[float, float] | None = None,
    rate: float | None = None,
) -> Level:
    return Level(
        concurrency=c,
        rate_req_per_s=rate,
        output_tok_per_s=tok,
        spread=spread or (tok, tok),
        decode_tok_per_s=None if tpot is None else 1000 / tpot,
        ttft_p50_ms=ttft,
        tpot_p50_ms=tpot,
    )


def test_linear_growth_never_saturates_even_as_latency_climbs() -> None:
    # The batch fills up: per-stream latency rises, but every doubling still nearly doubles tok/s.
    levels = [level(c, 50.0 * c, tpot=20.0 + c) for c in (1, 2, 4, 8, 16, 32)]
    assert detect(levels) is None


def test_a_plateau_with_a_latency_climb_saturates_at_its_first_level() -> None:
    levels = [
        level(4, 400.0),
        level(8, 760.0, tpot=21.0),
        level(16, 1500.0, tpot=22.0),
        level(32, 1510.0, ttft=900.0, tpot=22.0),  # the batch is full: requests queue
        level(64, 1512.0, ttft=2800.0, tpot=22.0),
    ]
    found = detect(levels)
    assert found is not None
    assert (found.concurrency, found.output_tok_per_s) == (16, 1500.0)
    assert "C=16 to C=32" in found.reason and "TTFT p50 +800%" in found.reason
    assert "TPOT" not in found.reason  # TPOT did not climb: only what did is named


def test_a_plateau_at_flat_latency_is_not_saturation() -> None:
    # Throughput stopped growing but nobody waits longer: a client or workload limit.
    levels = [level(8, 800.0), level(16, 805.0), level(32, 806.0)]
    assert detect(levels) is None


def test_a_fall_after_an_interior_peak_saturates_at_the_peak() -> None:
    levels = [level(4, 230.0), level(32, 800.0, tpot=40.0), level(128, 450.0, tpot=280.0)]
    found = detect(levels)
    assert found is not None and found.concurrency == 32
    assert "-43.8%" in found.reason and "TPOT p50" in found.reason


def test_a_gain_within_the_repeats_spread_is_noise() -> None:
    # +8% is above the 5% threshold, but a repeat of the same level varies by more than that.
    levels = [
        level(16, 1000.0, spread=(900.0, 1100.0)),
        level(32, 1080.0, spread=(1000.0, 1150.0), tpot=30.0),
    ]
    found = detect(levels)
    assert found is not None and found.concurrency == 16
    assert "repeats' spread" in found.reason


def test_a_gain_beyond_a_tight_spread_is_growth_and_below_the_floor_is_not() -> None:
    grows = [level(16, 1000.0, spread=(995.0, 1005.0)), level(32, 1080.0, tpot=30.0)]
    assert detect(grows) is None
    # repeats that agree to 0.2% do not make a +1% plateau into growth: the 5% floor holds
    flat = [level(16, 1000.0, spread=(999.0, 1001.0)), level(32, 1010.0, tpot=30.0)]
    found = detect(flat)
    assert found is not None and "5% threshold" in found.reason


def test_rate_sweeps_saturate_by_rate() -> None:
    levels = [
        level(None, 200.0, rate=1.0),
        level(None, 400.0, rate=2.0),
        level(None, 790.0, rate=4.0),
        level(None, 800.0, rate=8.0, ttft=5000.0),
    ]
    found = detect(levels)
    assert found is not None
    assert (found.concurrency, found.rate_req_per_s) == (None, 4.0)
    assert "4 req/s to 8 req/s" in found.reason


@pytest.mark.parametrize("levels", [[], [level(1, 80.0)], [level(1, 0.0), level(2, 0.0, tpot=40.0)]])
def test_too_little_to_judge_is_no_saturation(levels: list[Level]) -> None:
    assert detect(levels) is None
