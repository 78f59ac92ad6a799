"""Did this run get slower? A run judged against its baseline, cell by cell (a metric at a
level), by a policy (``gate_policy.py``). Pure: records in, a ``GateResult`` out.

A cell is a regression when the change is both large and real:

- large: worse by at least the policy's ``min_effect`` for the metric, and by at least twice the
  key's historical run-to-run coefficient of variation at that level, so a metric that wanders
  between days of one server cannot call its own wandering a regression;
- real: Welch's one-sided t-test on the repeats (the samples are repeats, never requests, whose
  latencies within one run are not independent draws), its p-value adjusted by Holm's method
  over every cell judged, below the policy's ``alpha``. Repeats of one run share that run's
  start (a fresh server, a machine's state), so two runs' means differ by more than their
  repeats show: where the key's history has measured that run-to-run part, it joins the test's
  variance, for the candidate's run and for the baseline's mean of runs.

A cell with too few repeats on either side, or too few requests per repeat for the quantile it
gates, is "insufficient data": never a pass. A run that failed its own verdict is not judged.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum, IntEnum

from llmload.metrics.confidence import holm, welch_worse
from llmload.results.gate_policy import Direction, GatePolicy, MetricRule
from llmload.results.runrecord import RunRecord

HISTORY_RUNS = 20  # how far back the run-to-run noise is read
_MIN_HISTORY = 3  # runs needed before the history's noise is known
# Runs needed before the wander joins the test: from 3 runs it has 2 degrees of freedom, whose
# t tail swallowed a 10% drop (fresh-clone CI, 2026-12-06: p 0.13 with base, same and a 5%
# regression as the history); from 6 it has 5.
_MIN_WANDER_RUNS = 6
# For normal noise the median absolute difference of successive values is 0.954 sigma
# (|x_i - x_{i-1}| is half-normal with scale sigma * sqrt(2), its median 0.6745 of that). One step
# change in a history moves only one difference, so a past regression does not pass for noise.
_SUCCESSIVE_TO_SIGMA = 0.6745 * math.sqrt(2)


class GateCode(IntEnum):
    """``llmload gate``'s exit codes (docs/history.md#exit-codes)."""

    PASS = 0
    REGRESSION = 1
    USAGE = 2  # a wrong option, store or run; runs that are not comparable
    INSUFFICIENT_DATA = 3
    RUN_FAILED = 4  # the run's own verdict was not ok: its numbers are not judged


class CellOutcome(Enum):
    PASS = "pass"
    REGRESSION = "regression"
    INSUFFICIENT = "insufficient data"


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    metric: str
    level: str
    direction: Direction
    candidate: tuple[float, ...]  # one value per repeat
    baseline: tuple[float, ...]
    worse_by: float | None  # relative change of the means, positive when worse
    limit: float  # the least worse_by that can be a regression
    history_cv: float | None  # the key's run-to-run noise at this level
    p: float | None  # one-sided, before the correction
    p_adjusted: float | None
    outcome: CellOutcome
    why: str  # for a cell not passed: what it lacked, or what moved

    @property
    def name(self) -> str:
        return f"{self.metric} @ {self.level}"


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult:
    candidate: RunRecord
    baseline_runs: tuple[RunRecord, ...]
    baseline: str  # in words: "pinned baseline 'main'", "the last 5 comparable runs"
    cells: tuple[Cell, ...]
    code: GateCode
    line: str  # the one line the command ends with
    warnings: tuple[str, ...] = ()
    waiver: str | None = None  # the reason a person accepted this run's regression


def judge_run(
    candidate: RunRecord,
    baseline_runs: Sequence[RunRecord],
    history: Sequence[RunRecord],
    policy: GatePolicy,
    *,
    baseline: str,
    pinned: RunRecord | None = None,
    waiver: str | None = None,
) -> GateResult:
    """``candidate`` against ``baseline_runs`` (their repeats pooled) by ``policy``.
    ``history`` is the key's earlier runs, newest first (their noise widens the limit);
    ``pinned``, when the baseline is rolling, is the pinned run it is compared with for drift."""

    def result(
        code: GateCode, line: str, cells: Sequence[Cell] = (), warnings: Sequence[str] = ()
    ) -> GateResult:
        return GateResult(
            candidate=candidate,
            baseline_runs=tuple(baseline_runs),
            baseline=baseline,
            cells=tuple(cells),
            code=code,
            line=line,
            warnings=tuple(warnings),
            waiver=waiver,
        )

    if candidate.exit_code != 0 or not candidate.complete:
        said = candidate.verdict_line or candidate.verdict or "it did not complete"
        return result(GateCode.RUN_FAILED, f"the run failed its own checks, so it is not judged: {said}")
    if not baseline_runs:
        return result(GateCode.INSUFFICIENT_DATA, f"insufficient data: no runs for {baseline}")
    levels = policy.levels or _levels(candidate)
    cells = _judged(
        [
            _cell(
                rule, level, candidate=candidate, baseline_runs=baseline_runs, history=history, policy=policy
            )
            for rule in policy.rules
            for level in levels
        ],
        policy.alpha,
    )
    warnings = _drift(cells, baseline_runs, pinned) if pinned is not None else ()
    return result(*_verdict(cells, waiver), cells, warnings)


def _verdict(cells: Sequence[Cell], waiver: str | None) -> tuple[GateCode, str]:
    """The gate's code and line from its judged cells: a regression in any cell fails it
    (unless waived), a cell without the data to judge leaves it undecided."""
    regressions = [c for c in cells if c.outcome is CellOutcome.REGRESSION]
    lacking = [c for c in cells if c.outcome is CellOutcome.INSUFFICIENT]
    if regressions:
        worst = max(regressions, key=lambda c: (c.worse_by or 0.0) / c.limit)
        line = f"regression: {len(regressions)} of {len(cells)} cells, worst {worst.name} {worst.why}"
        if waiver is not None:
            return GateCode.PASS, f"{line}; accepted: {waiver}"
        return GateCode.REGRESSION, line
    if lacking or not cells:
        first = f": {lacking[0].name} {lacking[0].why}" if lacking else ": no level to judge"
        return GateCode.INSUFFICIENT_DATA, f"insufficient data in {len(lacking)} of {len(cells)} cells{first}"
    return GateCode.PASS, f"pass: {len(cells)} cells, no regression beyond the noise"


def _levels(run: RunRecord) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.level for s in run.stages if not s.partial))


def _samples(runs: Sequence[RunRecord], metric: str, level: str) -> tuple[list[float], int]:
    """The metric's value in every whole repeat at ``level``, and the fewest requests behind one."""
    stages = [s for r in runs for s in r.stages if s.level == level and not s.partial]
    values = [v for s in stages if (v := s.metric(metric)) is not None]
    return values, min((s.requests_ok for s in stages), default=0)


@dataclass(frozen=True, slots=True)
class RunNoise:
    """How a run's mean of one metric at one level wanders between runs of the key, read from
    its last ``HISTORY_RUNS`` runs (relative to their median run)."""

    cv: float  # a run mean's standard deviation, from successive differences
    between: float  # the variance of that wander no run's repeats show (cv² less a mean's own)
    runs: int


def run_noise(history: Sequence[RunRecord], metric: str, level: str) -> RunNoise | None:
    """The key's run-to-run noise at ``level``; None with fewer than ``_MIN_HISTORY`` runs."""
    means, within = [], []
    for run in reversed(history[:HISTORY_RUNS]):  # oldest first: successive differences
        values, _ = _samples([run], metric, level)
        if values:
            mean = math.fsum(values) / len(values)
            means.append(mean)
            if len(values) > 1:
                within.append(statistics.variance(values, mean) / len(values))
    if len(means) < _MIN_HISTORY:
        return None
    centre = statistics.median(means)
    if centre == 0:
        return None
    sigma = statistics.median(abs(b - a) for a, b in itertools.pairwise(means)) / _SUCCESSIVE_TO_SIGMA
    cv = sigma / abs(centre)
    own = statistics.median(within) / centre**2 if within else 0.0
    return RunNoise(cv=cv, between=max(0.0, cv * cv - own), runs=len(means))


def _cell(
    rule: MetricRule,
    level: str,
    *,
    candidate: RunRecord,
    baseline_runs: Sequence[RunRecord],
    history: Sequence[RunRecord],
    policy: GatePolicy,
) -> Cell:
    mine, mine_requests = _samples([candidate], rule.metric, level)
    theirs, their_requests = _samples(baseline_runs, rule.metric, level)
    noise = run_noise(history, rule.metric, level)
    limit = max(rule.min_effect, 2 * noise.cv) if noise is not None else rule.min_effect
    lack = _lack(rule, policy.repeats, len(mine), len(theirs), min(mine_requests, their_requests))
    worse_by = None
    base = math.fsum(theirs) / len(theirs) if theirs else 0.0
    if mine and base != 0:
        change = (math.fsum(mine) / len(mine) - base) / abs(base)
        worse_by = -change if rule.direction is Direction.HIGHER else change
    p = None
    if lack is None:
        # the candidate is one run, the baseline a mean of runs: each carries its runs' wander
        runs = sum(1 for r in baseline_runs if _samples([r], rule.metric, level)[0])
        wander, wander_df = 0.0, math.inf
        if noise is not None and noise.runs >= _MIN_WANDER_RUNS:
            wander, wander_df = noise.between * base * base * (1 + 1 / max(runs, 1)), noise.runs - 1
        p = welch_worse(
            mine, theirs, higher_is_better=rule.direction is Direction.HIGHER,
            extra_variance=wander, extra_df=wander_df,
        )  # fmt: skip
    return Cell(
        metric=rule.metric,
        level=level,
        direction=rule.direction,
        candidate=tuple(mine),
        baseline=tuple(theirs),
        worse_by=worse_by,
        limit=limit,
        history_cv=noise.cv if noise is not None else None,
        p=p,
        p_adjusted=None,
        outcome=CellOutcome.INSUFFICIENT if lack else CellOutcome.PASS,
        why=lack or "",
    )


def _lack(rule: MetricRule, repeats: int, mine: int, theirs: int, requests: int) -> str | None:
    if mine < repeats or theirs < repeats:
        return f"has {mine} repeat(s) against {theirs}: the policy needs {repeats} on each side"
    if requests < rule.min_requests:
        return f"has {requests} requests in a repeat: its quantile needs {rule.min_requests}"
    return None


def _judged(cells: Sequence[Cell], alpha: float) -> tuple[Cell, ...]:
    """Each tested cell's p-value adjusted over all tested cells, and its outcome."""
    tested = [i for i, c in enumerate(cells) if c.p is not None]
    adjusted = dict(zip(tested, holm([cells[i].p or 0.0 for i in tested]), strict=True))
    out = []
    for i, cell in enumerate(cells):
        if i not in adjusted:
            out.append(cell)
            continue
        p = adjusted[i]
        worse = cell.worse_by or 0.0
        regression = worse >= cell.limit and p < alpha
        why = f"{worse:+.1%} worse (limit {cell.limit:.1%}, p {p:.2g})" if worse > 0 else ""
        outcome = CellOutcome.REGRESSION if regression else CellOutcome.PASS
        out.append(replace(cell, p_adjusted=p, outcome=outcome, why=why))
    return tuple(out)


def _drift(cells: Sequence[Cell], baseline_runs: Sequence[RunRecord], pinned: RunRecord) -> tuple[str, ...]:
    """Where the rolling baseline has moved from the pinned one by more than a cell's limit in
    the worse direction: a slow regression the rolling baseline followed, step by step."""
    said = []
    for cell in cells:
        rolling, _ = _samples(baseline_runs, cell.metric, cell.level)
        pinned_values, _ = _samples([pinned], cell.metric, cell.level)
        if not rolling or not pinned_values:
            continue
        base = math.fsum(pinned_values) / len(pinned_values)
        if base == 0:
            continue
        change = (math.fsum(rolling) / len(rolling) - base) / abs(base)
        worse = -change if cell.direction is Direction.HIGHER else change
        if worse >= cell.limit:
            said.append(
                f"the rolling baseline's {cell.name} is {worse:.1%} worse than the pinned run "
                f"{pinned.run_id}'s: a regression may have crept in run by run"
            )
    return tuple(said)
