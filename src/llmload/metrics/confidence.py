"""How sure a repeated measurement is: a mean's 95% confidence interval, and whether two means
differ by more than their noise.

A sweep's ``--repeat N`` runs each level N times; the N stage values (tok/s, a latency
percentile) are treated as independent draws. The interval is Student's t (small N is the
normal case: 3 to 5 repeats), and two runs are told apart by Welch's t-test, which does not
assume the two runs are equally noisy. Pure arithmetic: no scipy for a table of 30 numbers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

NOISY_HALF_WIDTH = 0.05  # a level whose interval is wider than ±5% of its mean is called noisy

# Student's t at 97.5% (two-sided 95%) for 1..30 degrees of freedom, then 40, 60, 120 and the
# normal's 1.96; in between, t is close to linear in 1/df, so that is how it is interpolated.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_ANCHORS = (
    *((1 / df, t) for df, t in enumerate(_T975, start=1)),
    (1 / 40, 2.021),
    (1 / 60, 2.000),
    (1 / 120, 1.980),
    (0.0, 1.960),
)


def t975(df: float) -> float:
    """Student's t quantile at 0.975 for ``df`` degrees of freedom (Welch's may be fractional)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    x = 1 / df
    for (x0, t0), (x1, t1) in itertools.pairwise(_ANCHORS):
        if x1 <= x <= x0:
            return t0 if x0 == x1 else t1 + (t0 - t1) * (x - x1) / (x0 - x1)
    return 1.960


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A mean over repeats with its 95% confidence interval (``low``/``high``)."""

    mean: float
    n: int
    stdev: float  # the sample standard deviation (n - 1); 0 for one value
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def relative(self) -> float | None:
        """Half-width over the mean: 0.05 is "±5%"; None for a zero mean."""
        return None if self.mean == 0 else self.half_width / abs(self.mean)

    @property
    def noisy(self) -> bool:
        rel = self.relative
        return rel is not None and rel > NOISY_HALF_WIDTH


def interval(values: Sequence[float]) -> Interval | None:
    """The 95% interval of the mean of ``values``; None with fewer than two (no noise measured)."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * stdev / math.sqrt(n)
    return Interval(mean=mean, n=n, stdev=stdev, low=mean - half, high=mean + half)


def differ(a: Interval | None, b: Interval | None) -> bool | None:
    """Welch's t-test at 95%: True when the means differ beyond both runs' noise, False when
    they do not, None when either side has no measured noise (one value)."""
    if a is None or b is None:
        return None
    va, vb = a.stdev**2 / a.n, b.stdev**2 / b.n
    if va + vb == 0:
        return a.mean != b.mean  # no spread on either side: any difference is beyond it
    t = abs(a.mean - b.mean) / math.sqrt(va + vb)
    # Welch-Satterthwaite degrees of freedom (a side without spread contributes none)
    df = (va + vb) ** 2 / sum(v * v / (x.n - 1) for v, x in ((va, a), (vb, b)) if v > 0)
    return t > t975(max(df, 1.0))


def student_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (fractional, as Welch's are):
    the tail is half the regularized incomplete beta function I_x(df/2, 1/2) at
    x = df / (df + t^2), mirrored for a negative t."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, not {df}")
    if math.isinf(df):
        return 0.5 * math.erfc(t / math.sqrt(2))  # the normal's tail
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def welch_worse(
    candidate: Sequence[float],
    baseline: Sequence[float],
    *,
    higher_is_better: bool,
    extra_variance: float = 0.0,
    extra_df: float = math.inf,
) -> float:
    """Welch's one-sided test that the candidate's mean is worse than the baseline's: the
    p-value (small: a real regression). Needs two values a side; with no spread at all any
    difference in the worse direction is certain (0.0) and any other none (1.0).

    ``extra_variance`` is noise of the difference that neither side's values show (the run-to-run
    wander of a server between runs, when the values are one run's repeats), estimated with
    ``extra_df`` degrees of freedom; it joins the Welch-Satterthwaite sum as a third term."""
    a, b = interval(candidate), interval(baseline)
    if a is None or b is None:
        raise ValueError("the test needs two values or more on each side")
    worse_by = (b.mean - a.mean) if higher_is_better else (a.mean - b.mean)
    va, vb, ve = a.stdev**2 / a.n, b.stdev**2 / b.n, max(0.0, extra_variance)
    total = va + vb + ve
    if total == 0:
        return 0.0 if worse_by > 0 else 1.0
    parts = [v * v / (x.n - 1) for v, x in ((va, a), (vb, b)) if v > 0]
    if ve > 0 and math.isfinite(extra_df):
        parts.append(ve * ve / extra_df)
    df = total**2 / sum(parts) if sum(parts) > 0 else math.inf
    return student_sf(worse_by / math.sqrt(total), df)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for the number of tests judged together: each
    stays comparable with the one significance level, and the chance of any false alarm among
    them stays under it (Holm 1979)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (evaluated
    with the modified Lentz method), on the side of x where the fraction converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return result
