"""Change points of a trend: E-divisive means (docs/history.md).

The method is Matteson and James's hierarchical divisive estimation (D. S. Matteson, N. A.
James, "A Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data",
JASA 109(505), 2014), the one MongoDB's performance CI and Apache Otava (formerly Hunter;
Fleming et al., arXiv 2301.03034) build on. Read for one series of per-run values, oldest first:

- Two samples differ by their energy divergence: twice the mean distance between a value of
  one and a value of the other, less the mean distance within each. It is zero for samples of
  one distribution and grows with any difference between them (not only of the mean). Scaled by
  ``n·m/(n+m)``, it is the statistic ``Q`` the method maximises.
- The best split of a segment is the ``τ`` (with the end ``κ`` of the second sample, which need
  not be the segment's end) that maximises ``Q`` of the values before ``τ`` against those from
  ``τ`` to ``κ``. ``τ`` is the candidate; ``κ`` only keeps a later change from blurring it.
- Bisection: every accepted point splits its segment, and the next candidate is the best split
  of whichever segment has the largest ``Q``.
- A candidate is accepted only if a permutation test says it is no accident: the values are
  shuffled within each current segment, the best split found again the same way, and the
  p-value is ``(1 + shuffles whose Q reached the candidate's) / (1 + shuffles)``. The first
  candidate over the significance level ends the search.

Parameters (``Settings``): distance exponent 1 (the paper's alpha, in (0, 2)); significance 0.01
and 199 permutations, so the smallest p-value is 0.005 and a change needs about five runs on
each side to be found; segments of at least 3 runs; a fixed seed, so one series always gives
the same points. The authors' R package (ecp) tests at 0.05 by default; a team's trend has many
series (metrics by levels), so the gate on noise here is five times stricter.

Pure, and the whole cost is ``permutations * n²`` additions per accepted point: a few tens of
milliseconds for 30 runs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import fmean

from llmload.results.rundiff import fingerprint_difference
from llmload.results.runrecord import RunRecord

_TIE = 1e-9  # relative: statistics this close are equal


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    exponent: float = 1.0  # the distance |x - y| ** exponent; the paper's alpha, in (0, 2)
    significance: float = 0.01
    permutations: int = 199
    min_size: int = 3  # runs on each side of a point, at least
    seed: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Split:
    """A point the method accepted, in the values it was given."""

    index: int  # the first value after the change
    statistic: float  # Q at the split
    p_value: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangePoint:
    """A change between two runs of a trend, with what changed in the runs' fingerprints."""

    index: int  # the run at the point, in the runs given (0: the oldest)
    run_id: str
    before_run_id: str
    mean_before: float  # over the runs since the change point before (or the first run)
    mean_after: float  # over the runs up to the next change point (or the last run)
    relative: float | None  # mean_after / mean_before - 1; None when mean_before is 0
    p_value: float
    differences: tuple[str, ...]  # "vllm 0.9.1 → 0.9.2", "--enable-chunked-prefill added", ...

    def describe(self) -> str:
        """``-5.1% (p=0.005): vllm 0.9.1 → 0.9.2; --enable-chunked-prefill added``."""
        change = "" if self.relative is None else f"{self.relative * 100:+.1f}% "
        said = "; ".join(self.differences) or "nothing recorded changed"
        return f"{change}(p={self.p_value:.3f}): {said}"


def change_points(
    runs: Sequence[RunRecord], values: Sequence[float | None], settings: Settings | None = None
) -> tuple[ChangePoint, ...]:
    """The change points of ``values`` (one per run, oldest first); a run without a value is
    passed over, and a point's index and neighbours are runs with values."""
    kept = [(run, v) for run, v in zip(runs, values, strict=True) if v is not None]
    positions = [i for i, v in enumerate(values) if v is not None]
    series = [v for _run, v in kept]
    splits = e_divisive(series, settings or Settings())
    bounds = [0, *(s.index for s in splits), len(series)]
    out = []
    for n, split in enumerate(splits, start=1):
        before = fmean(series[bounds[n - 1] : bounds[n]])
        after = fmean(series[bounds[n] : bounds[n + 1]])
        run, previous = kept[split.index][0], kept[split.index - 1][0]
        out.append(
            ChangePoint(
                index=positions[split.index],
                run_id=run.run_id,
                before_run_id=previous.run_id,
                mean_before=before,
                mean_after=after,
                relative=None if before == 0 else after / before - 1,
                p_value=split.p_value,
                differences=fingerprint_difference(previous, run),
            )
        )
    return tuple(out)


def e_divisive(values: Sequence[float], settings: Settings) -> tuple[Split, ...]:
    """The accepted change points of ``values``, by index."""
    if settings.min_size < 2:  # a sample of one has no distance within it
        raise ValueError("min_size must be at least 2")
    rng = random.Random(settings.seed)
    bounds = [0, len(values)]
    best: dict[int, tuple[float, int]] = {}  # segment start -> its best (Q, τ), once computed
    found: list[Split] = []
    while True:
        for start, end in pairwise(bounds):
            if start not in best:
                best[start] = best_split(values[start:end], settings)
        start = max(best, key=lambda s: best[s][0])
        q, tau = best[start]
        if tau < 0:  # no segment is long enough to split
            break
        p = _p_value(values, bounds, q, rng, settings)
        if p > settings.significance:
            break
        found.append(Split(index=start + tau, statistic=q, p_value=p))
        del best[start]
        bounds = sorted([*bounds, start + tau])
    return tuple(sorted(found, key=lambda s: s.index))


def _p_value(
    values: Sequence[float], bounds: Sequence[int], q: float, rng: random.Random, settings: Settings
) -> float:
    """The share of shuffles within the current segments whose best split reaches ``q``.

    Once so many have reached it that ``q`` cannot be significant, the rest are not drawn: the
    p-value returned is then only a lower bound, over the significance level either way."""
    allowed = settings.significance * (1 + settings.permutations) - 1
    reached = 0
    for _ in range(settings.permutations):
        top = 0.0
        for start, end in pairwise(bounds):
            segment = list(values[start:end])
            rng.shuffle(segment)
            top = max(top, best_split(segment, settings)[0])
        # a shuffle that restores the order sums the same distances in another order: a tie
        # must count as one, not miss by a rounding error
        reached += top >= q - _TIE * abs(q)
        if reached > allowed:
            break
    return (1 + reached) / (1 + settings.permutations)


def best_split(segment: Sequence[float], settings: Settings) -> tuple[float, int]:
    """The largest ``Q`` over the splits ``τ`` (and ends ``κ``) of ``segment``, and its ``τ``;
    ``(0.0, -1)`` when the segment is too short to split."""
    n, m, a = len(segment), settings.min_size, settings.exponent
    if n < 2 * m:
        return 0.0, -1
    # above[j][t]: the distances of value j to the values before t (t <= j), summed; every sum
    # the statistic needs is a difference of these, so each (τ, κ) costs a few operations
    above: list[list[float]] = []
    for j, y in enumerate(segment):
        sums, total = [0.0], 0.0
        for x in segment[:j]:
            total += abs(x - y) if a == 1.0 else abs(x - y) ** a
            sums.append(total)
        above.append(sums)
    within_x = [0.0]  # within the first t values, for each t
    for j in range(n):
        within_x.append(within_x[-1] + above[j][j])
    top, at = -float("inf"), -1
    for tau in range(m, n - m + 1):
        between = within_y = 0.0
        pairs_x = tau * (tau - 1) / 2
        for kappa in range(tau + 1, n + 1):
            column = above[kappa - 1]
            between += column[tau]
            within_y += column[kappa - 1] - column[tau]
            size_y = kappa - tau
            if size_y < m:
                continue
            divergence = (
                2 * between / (tau * size_y)
                - within_x[tau] / pairs_x
                - within_y / (size_y * (size_y - 1) / 2)
            )
            q = tau * size_y / (tau + size_y) * divergence
            if q > top:
                top, at = q, tau
    return top, at
