"""Arrival schedules: rate, distribution, and an exact split of one global schedule."""

from __future__ import annotations

import itertools
import statistics

import pytest
from scipy import stats as scistats  # type: ignore[import-untyped]

from llmload.errors import ConfigError
from llmload.workload.arrivals import Arrivals


def first(it: object, n: int) -> list[float]:
    return list(itertools.islice(it, n))  # type: ignore[call-overload]


def test_poisson_has_the_rate_and_exponential_gaps() -> None:
    gaps = first(Arrivals(50.0, "poisson", seed=7).gaps(), 20_000)
    assert statistics.fmean(gaps) == pytest.approx(1 / 50, rel=0.03)
    assert scistats.kstest(gaps, "expon", args=(0, 1 / 50)).pvalue > 0.01


def test_gamma_burstiness_changes_the_spread_not_the_rate() -> None:
    bursty = first(Arrivals(50.0, "gamma", burstiness=0.25, seed=1).gaps(), 20_000)
    regular = first(Arrivals(50.0, "gamma", burstiness=4.0, seed=1).gaps(), 20_000)
    for gaps in (bursty, regular):
        assert statistics.fmean(gaps) == pytest.approx(1 / 50, rel=0.05)
    assert statistics.stdev(bursty) > 3 * statistics.stdev(regular)


def test_constant_rate_is_exact() -> None:
    assert first(Arrivals(4.0, "constant").offsets(), 4) == [0.25, 0.5, 0.75, 1.0]


def test_shares_partition_the_global_schedule_exactly() -> None:
    spec = Arrivals(100.0, "poisson", seed=3)
    whole = first(spec.offsets(), 3_000)
    parts = [first(spec.offsets(k, 3), 1_000) for k in range(3)]
    assert sorted(itertools.chain(*parts)) == whole


def test_bad_specs_name_their_flag() -> None:
    with pytest.raises(ConfigError, match="--rate"):
        Arrivals(0.0)
    with pytest.raises(ConfigError, match="--arrival"):
        Arrivals(1.0, "weibull")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--burstiness"):
        Arrivals(1.0, "gamma", burstiness=0)
