"""The 95% interval of repeats and Welch's test, against values worked out by hand and the
coverage they promise on draws whose true mean is known."""

from __future__ import annotations

import random

import pytest

from llmload.metrics import confidence
from llmload.metrics.confidence import differ, interval, t975


def test_t_quantiles_match_the_table_and_approach_the_normal() -> None:
    assert t975(1) == 12.706 and t975(4) == 2.776 and t975(30) == 2.042
    assert t975(2) > t975(2.5) > t975(3)  # Welch's fractional degrees of freedom fall between
    assert t975(60) == pytest.approx(2.000) and t975(1e12) == pytest.approx(1.960, abs=1e-6)
    with pytest.raises(ValueError):
        t975(0.5)


def test_the_interval_of_three_repeats() -> None:
    i = interval([100.0, 102.0, 98.0])
    assert i is not None
    # mean 100, s = 2, half-width t(2) * 2 / sqrt(3) = 4.303 * 1.1547
    assert (i.mean, i.stdev, i.n) == (100.0, 2.0, 3)
    assert i.half_width == pytest.approx(4.9687, abs=1e-4)
    assert not i.noisy  # ±4.97% is inside ±5%
    wider = interval([100.0, 103.0, 97.0])
    assert wider is not None and wider.noisy
    assert interval([5.0]) is None  # one run measures no noise


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = random.Random(7)
    hits = 0
    for _ in range(2000):
        i = interval([rng.gauss(50.0, 3.0) for _ in range(4)])
        assert i is not None
        hits += i.low <= 50.0 <= i.high
    assert 0.93 <= hits / 2000 <= 0.97


def test_welch_tells_a_difference_from_noise() -> None:
    assert differ(interval([100, 101, 99]), interval([110, 111, 109])) is True
    assert differ(interval([100, 105, 95]), interval([102, 107, 97])) is False
    assert differ(interval([100.0]), interval([110, 111, 109])) is None
    # false alarms: two runs of the same distribution differ at about the 5% the test allows
    rng = random.Random(11)
    alarms = sum(
        bool(
            differ(
                interval([rng.gauss(0, 1) for _ in range(5)]), interval([rng.gauss(0, 2) for _ in range(5)])
            )
        )
        for _ in range(2000)
    )
    assert alarms / 2000 < 0.08


@pytest.mark.parametrize("df", [1, 2.5, 4, 9.3, 30, 250])
def test_student_tail_is_scipys(df: float) -> None:
    stats = pytest.importorskip("scipy.stats")
    for t in (-4.0, -1.0, 0.0, 0.3, 1.0, 2.0, 6.0, 40.0):
        assert confidence.student_sf(t, df) == pytest.approx(stats.t.sf(t, df), rel=1e-9, abs=1e-15)


def test_welchs_one_sided_test_is_scipys_and_holm_steps_down() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(5)
    for _ in range(100):
        a = [rng.gauss(100, 3) for _ in range(rng.randint(2, 6))]
        b = [rng.gauss(102, 6) for _ in range(rng.randint(2, 6))]
        want = stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue
        assert confidence.welch_worse(a, b, higher_is_better=True) == pytest.approx(want, rel=1e-9)
        want = stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue
        assert confidence.welch_worse(a, b, higher_is_better=False) == pytest.approx(want, rel=1e-9)
    assert confidence.welch_worse([1.0, 1.0], [2.0, 2.0], higher_is_better=True) == 0.0  # no spread
    assert confidence.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_noise_the_values_do_not_show_joins_welchs_sum_as_a_third_term() -> None:
    stats = pytest.importorskip("scipy.stats")
    a, b = [96.0, 97.0, 95.5], [100.0, 101.0, 99.0, 100.5]
    va, vb, ve, df_e = stats.tvar(a) / 3, stats.tvar(b) / 4, 2.5, 9
    total = va + vb + ve
    df = total**2 / (va**2 / 2 + vb**2 / 3 + ve**2 / df_e)
    t = (sum(b) / 4 - sum(a) / 3) / total**0.5
    got = confidence.welch_worse(a, b, higher_is_better=True, extra_variance=ve, extra_df=df_e)
    assert got == pytest.approx(stats.t.sf(t, df), rel=1e-9)
    assert got > confidence.welch_worse(a, b, higher_is_better=True)  # the wander makes it less sure
    # known exactly (infinite degrees of freedom), and with no spread in the values, it is the normal's
    exact = confidence.welch_worse([1.0, 1.0], [2.0, 2.0], higher_is_better=True, extra_variance=0.25)
    assert exact == pytest.approx(stats.norm.sf(2.0), rel=1e-9)
