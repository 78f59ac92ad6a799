"""One key's trend of one metric, a point per run: what the terminal table, the trend page and
the change points all read, so they can never disagree (docs/history.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from llmload.results.changepoints import ChangePoint, change_points
from llmload.results.runrecord import RUN_METRICS, RunRecord, StageRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class TrendPoint:
    run: RunRecord
    value: float | None  # the mean over the run's repeats at the level, or the run's own figure
    low: float | None  # the repeats' range; equal to value with one repeat
    high: float | None
    repeats: int  # measured stages at the level (0 for a run metric, which has no level)
    client_bound: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Trend:
    metric: str
    level: str | None  # None for a run metric (RUN_METRICS)
    points: tuple[TrendPoint, ...]  # oldest run first
    changes: tuple[ChangePoint, ...]


def oldest_first(records: Sequence[RunRecord]) -> list[RunRecord]:
    """The store gives runs newest first: reversed, runs that started in one second keep their
    order."""
    return sorted(reversed(records), key=lambda r: r.started_s or 0.0)


def at_level(record: RunRecord, level: str) -> list[StageRecord]:
    """The run's measured stages at ``level``, every repeat; a stage the run's end cut is left out."""
    return [s for s in record.stages if s.level == level and not s.partial]


def trend(runs: Sequence[RunRecord], metric: str, level: str | None) -> Trend:
    """``metric`` at ``level`` for each of ``runs`` (oldest first), and its change points."""
    points = tuple(_point(run, metric, level) for run in runs)
    return Trend(
        metric=metric,
        level=None if metric in RUN_METRICS else level,
        points=points,
        changes=change_points([p.run for p in points], [p.value for p in points]),
    )


def _point(run: RunRecord, metric: str, level: str | None) -> TrendPoint:
    if metric in RUN_METRICS or level is None:
        value = run.run_metric(metric) if metric in RUN_METRICS else None
        return TrendPoint(run=run, value=value, low=value, high=value, repeats=0, client_bound=False)
    stages = at_level(run, level)
    measured = [v for s in stages if (v := s.metric(metric)) is not None]
    return TrendPoint(
        run=run,
        value=fmean(measured) if measured else None,
        low=min(measured, default=None),
        high=max(measured, default=None),
        repeats=len(stages),
        client_bound=any(s.client_bound for s in stages),
    )
