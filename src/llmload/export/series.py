"""What each plot shows, as plain data: the series are taken from ``stages.csv`` rows only.

Keeping the data apart from the drawing (export/plots.py) lets a test check that every plotted
number is a number of ``stages.csv`` (or ``timeseries.csv`` for the timeline), and lets the
comparison overlay runs with the same functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from llmload.export.rundata import TimePoint
from llmload.export.tables import Row
from llmload.metrics.catalog import PLOTTED_LATENCIES, by_key, latency_column, stat_header
from llmload.metrics.confidence import Interval, interval
from llmload.metrics.pareto import frontier

# "nines": percentiles spaced by -log10(1 - q), so p50, p90, p99 and p99.9 sit equally apart
Scale = Literal["linear", "log2", "nines"]


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]
    # Repeat spread per point (min, max across repeats of a level); None when nothing repeated.
    low: tuple[float | None, ...] | None = None
    high: tuple[float | None, ...] | None = None
    point_labels: tuple[str, ...] | None = None
    right_axis: bool = False
    step: bool = False
    dashed: bool = False  # a line through points of other series (the Pareto frontier)
    stage: int | None = None  # the stage it shows, so a page can pick one stage's curves


@dataclass(frozen=True, slots=True)
class FigureSpec:
    name: str  # the PNG's file stem
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    xscale: Scale = "linear"
    right_ylabel: str | None = None
    markers: tuple[tuple[float, str], ...] = ()  # vertical lines: (x, label)
    # where a page shows it: "concurrency", "time", "tradeoff" or "distribution"
    group: str = "concurrency"


@dataclass(frozen=True, slots=True)
class LevelStat:
    concurrency: int
    mean: float | None
    low: float | None
    high: float | None
    repeats: int
    interval: Interval | None = None  # the mean's 95% interval, with two repeats or more


def by_level(rows: Sequence[Row], column: str) -> list[LevelStat]:
    """A column per concurrency level: mean, min and max over the level's repeats."""
    groups: dict[int, list[float]] = {}
    for row in rows:
        level, value = row.get("concurrency"), row.get(column)
        if not isinstance(level, int) or isinstance(level, bool):
            continue
        values = groups.setdefault(level, [])
        if isinstance(value, int | float) and not isinstance(value, bool):
            values.append(float(value))
    out = []
    for level, values in sorted(groups.items()):
        if values:
            mean = sum(values) / len(values)
            out.append(LevelStat(level, mean, min(values), max(values), len(values), interval(values)))
        else:
            out.append(LevelStat(level, None, None, None, 0))
    return out


def level_series(rows: Sequence[Row], column: str, label: str) -> Series:
    stats = by_level(rows, column)
    repeated = any(s.repeats > 1 for s in stats)
    return Series(
        label,
        tuple(float(s.concurrency) for s in stats),
        tuple(s.mean for s in stats),
        tuple(s.low for s in stats) if repeated else None,
        tuple(s.high for s in stats) if repeated else None,
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def concurrency_scale(rows: Sequence[Row]) -> Scale:
    # Sweeps double the level (1, 2, 4, ... 128): on a linear axis the low levels, where
    # single-stream speed lives, would be crushed into one corner.
    levels = [level for r in rows if isinstance(level := r.get("concurrency"), int)]
    return "log2" if levels and min(levels) > 0 and max(levels) >= 8 * min(levels) else "linear"


def throughput_figure(runs: Mapping[str, Sequence[Row]], name: str = "throughput") -> FigureSpec:
    """Aggregate output tok/s against concurrency, one series per run."""
    all_rows = [row for rows in runs.values() for row in rows]
    return FigureSpec(
        name,
        "Aggregate output throughput",
        "concurrency",
        "output tok/s",
        tuple(level_series(rows, "output_tok_per_s", label) for label, rows in runs.items()),
        concurrency_scale(all_rows),
    )


def latency_figure(rows: Sequence[Row], metric: str) -> FigureSpec:
    """A stage latency's p50 and p99 against concurrency, named as the catalog names it."""
    title = by_key(metric).short
    shown = [latency_column(metric, q) for q in ("p50", "p99")]
    return FigureSpec(
        metric,
        f"{title} p50 and p99",
        "concurrency",
        f"{title} (ms)",
        tuple(level_series(rows, c.key, c.header) for c in shown),
        concurrency_scale(rows),
    )


def _first_labels(levels: Iterable[int]) -> tuple[str, ...]:
    # Repeats of a level sit on top of each other: one label per level keeps them readable.
    seen: set[int] = set()
    labels = []
    for level in levels:
        labels.append("" if level in seen else f"C={level}")
        seen.add(level)
    return tuple(labels)


def throughput_latency_figure(rows: Sequence[Row]) -> FigureSpec:
    """Per-stream decode speed against aggregate tok/s, one point per stage, labelled by C."""
    points: list[tuple[int, int, float, float]] = []
    for r in rows:
        x, y = r.get("output_tok_per_s"), r.get("decode_tok_per_s")
        if isinstance(x, float) and isinstance(y, float):
            points.append((_int(r.get("concurrency")), _int(r.get("index")), x, y))
    points.sort()
    series = Series(
        "stages",
        tuple(p[2] for p in points),
        tuple(p[3] for p in points),
        point_labels=_first_labels(p[0] for p in points),
    )
    return FigureSpec(
        "throughput_latency",
        "Throughput-latency curve",
        "aggregate output tok/s",
        "per-stream decode tok/s",
        (series,),
        group="tradeoff",
    )


def timeline_figure(points: Sequence[TimePoint], rows: Sequence[Row]) -> FigureSpec:
    """Output tok/s and in-flight requests each second, with a line where each stage starts."""
    level = {r["index"]: r["concurrency"] for r in rows}
    markers = []
    previous: int | None = None
    for p in points:
        if p.stage is not None and p.stage != previous:
            markers.append((p.t_s, f"C={level.get(p.stage, '?')}"))
            previous = p.stage
    return FigureSpec(
        "timeline",
        "Throughput and in-flight requests over time",
        "time (s)",
        "output tok/s",
        (
            Series("output tok/s", tuple(p.t_s for p in points), tuple(p.output_tok_per_s for p in points)),
            Series(
                "in flight",
                tuple(p.t_s for p in points),
                tuple(p.in_flight for p in points),
                right_axis=True,
                step=True,
            ),
        ),
        right_ylabel="requests in flight",
        markers=tuple(markers),
        group="time",
    )


@dataclass(frozen=True, slots=True)
class ParetoPoint:
    """One level of one run, repeats averaged: what a user gets against what the fleet gets."""

    run: str
    concurrency: int
    per_user_tok_per_s: float  # 1000 / TPOT p50: one stream's decode speed
    output_tok_per_s: float
    ttft_p99_ms: float | None
    on_frontier: bool = False  # no point of any run beats it on both per-user and total tok/s
    on_ttft_frontier: bool = False  # ... nor on total tok/s and TTFT p99


def pareto_points(runs: Mapping[str, Sequence[Row]]) -> list[ParetoPoint]:
    """Every run's levels with their places on both frontiers, all runs judged together."""
    points = []
    for label, rows in runs.items():
        ttft = {s.concurrency: s.mean for s in by_level(rows, "ttft_p99_ms")}
        speed = {s.concurrency: s.mean for s in by_level(rows, "decode_tok_per_s")}
        for stat in by_level(rows, "output_tok_per_s"):
            user = speed.get(stat.concurrency)
            if stat.mean is not None and user is not None:
                points.append(
                    ParetoPoint(label, stat.concurrency, user, stat.mean, ttft.get(stat.concurrency))
                )
    best = set(frontier([(p.per_user_tok_per_s, p.output_tok_per_s) for p in points]))
    timed = [i for i, p in enumerate(points) if p.ttft_p99_ms is not None]
    fast = {
        timed[i]
        for i in frontier(
            [(points[j].output_tok_per_s, points[j].ttft_p99_ms or 0.0) for j in timed], maximize_y=False
        )
    }
    return [replace(p, on_frontier=i in best, on_ttft_frontier=i in fast) for i, p in enumerate(points)]


def pareto_figures(runs: Mapping[str, Sequence[Row]], prefix: str = "") -> tuple[FigureSpec, ...]:
    """Per-user against total tok/s, and TTFT p99 against total tok/s: one curve per run,
    points labelled by concurrency, the frontier over all runs dashed."""
    points = pareto_points(runs)
    if not points:
        return ()

    def curves(x: str, y: str) -> list[Series]:
        out = []
        for label in runs:
            mine = sorted(
                (p for p in points if p.run == label and getattr(p, y) is not None),
                key=lambda p: p.concurrency,
            )
            out.append(
                Series(
                    label,
                    tuple(getattr(p, x) for p in mine),
                    tuple(getattr(p, y) for p in mine),
                    point_labels=tuple(f"C={p.concurrency}" for p in mine),
                )
            )
        return out

    def line(x: str, y: str, on: str) -> Series:
        kept = sorted((p for p in points if getattr(p, on)), key=lambda p: getattr(p, x))
        return Series(
            "Pareto frontier",
            tuple(getattr(p, x) for p in kept),
            tuple(getattr(p, y) for p in kept),
            dashed=True,
        )

    throughput = FigureSpec(
        f"{prefix}pareto",
        "Pareto frontier: interactivity against throughput",
        "per-user output tok/s (1000 / TPOT p50)",
        "aggregate output tok/s",
        (
            *curves("per_user_tok_per_s", "output_tok_per_s"),
            line("per_user_tok_per_s", "output_tok_per_s", "on_frontier"),
        ),
        group="tradeoff",
    )
    ttft_p99 = stat_header("ttft", "p99")
    ttft = FigureSpec(
        f"{prefix}pareto_ttft",
        f"Pareto frontier: {ttft_p99} against throughput",
        "aggregate output tok/s",
        f"{ttft_p99} (ms)",
        (
            *curves("output_tok_per_s", "ttft_p99_ms"),
            line("output_tok_per_s", "ttft_p99_ms", "on_ttft_frontier"),
        ),
        group="tradeoff",
    )
    return throughput, ttft


def informative(spec: FigureSpec) -> bool:
    """A figure worth drawing: points at two x values or more (points stacked on one x, as a
    one-stage run's p50 and p99 against its one concurrency, say nothing an axis can show;
    their numbers are in the tables)."""
    xs = {x for s in spec.series if not s.dashed for x, y in zip(s.x, s.y, strict=True) if y is not None}
    return len(xs) > 1


def report_figures(rows: Sequence[Row], timeseries: Sequence[TimePoint] | None) -> tuple[FigureSpec, ...]:
    """The plots against concurrency and over time of a run's report, in the page's order;
    those that would hold one point (a one-stage run's curves) are left out."""
    figures = [throughput_figure({"output tok/s": rows})]
    figures += [latency_figure(rows, metric) for metric in PLOTTED_LATENCIES]
    figures.append(throughput_latency_figure(rows))
    figures += pareto_figures({"this run": rows})
    if timeseries:
        figures.append(timeline_figure(timeseries, rows))
    return tuple(f for f in figures if informative(f))
