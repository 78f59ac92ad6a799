"""Each stage's latency distributions, read back from the exact histograms of ``histograms.json``.

A distribution is drawn as latency against percentile, on an axis of "nines" (p50, p90, p99,
p99.9 equally spaced), because the tail is what a load test is for and a linear percentile axis
crushes it into the last pixel. Each point is the same quantile the summary computes from the
same histogram, rounded the same way, so the curve's p50 and p99 are the summary's own numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson

from llmload.errors import ResultsError
from llmload.export.series import FigureSpec, Series
from llmload.export.tables import Row
from llmload.metrics import wire
from llmload.metrics.catalog import DISTRIBUTED_LATENCIES, by_key
from llmload.metrics.histogram import LogHistogram
from llmload.protocol.jsonvalue import JSONObject, array, obj
from llmload.results.summary_stage import Stage

HISTOGRAMS = "histograms.json"
# Percentiles drawn: every whole one, then the tail the summary reports (p99.9) and one beyond.
GRID = (*(i / 100 for i in range(1, 100)), 0.995, 0.999, 0.9999)
_MS = 1e6

StageHistograms = Mapping[str, LogHistogram]


def read_histograms(run_dir: Path) -> tuple[StageHistograms, ...] | None:
    """Each stage's latency histograms (ns), in the summary's stage order; None without the file."""
    path = run_dir / HISTOGRAMS
    if not path.is_file():
        return None
    try:
        stages = array(obj(orjson.loads(path.read_bytes()))["stages"], "stages")
        return tuple(_stage(obj(stage)) for stage in stages)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{path}: not a histograms file llmload wrote ({exc})") from None


def _stage(stage: JSONObject) -> StageHistograms:
    hist = obj(stage.get("hist") or {})
    return {key: wire.decode(LogHistogram, hist[key]) for key in DISTRIBUTED_LATENCIES if key in hist}


def _figure(metric: str, series: Sequence[Series]) -> FigureSpec:
    name = by_key(metric).short
    return FigureSpec(
        f"dist_{metric}",
        f"{name} by percentile",
        "percentile",
        f"{name} (ms)",
        tuple(series),
        xscale="nines",
        group="distribution",
    )


def _label(index: int, rows: Sequence[Row]) -> str:
    level = next((r.get("concurrency") for r in rows if r.get("index") == index), "?")
    return f"stage {index} (C={level})"


def distribution_figures(stages: Sequence[StageHistograms], rows: Sequence[Row]) -> tuple[FigureSpec, ...]:
    """Latency by percentile for each metric, one series per stage that measured it."""
    figures = []
    for metric in DISTRIBUTED_LATENCIES:
        series = []
        for index, hists in enumerate(stages):
            h = hists.get(metric)
            if h is not None and h.count:
                values = tuple(None if v is None else round(v / _MS, 4) for v in h.quantiles(GRID))
                series.append(Series(_label(index, rows), GRID, values, stage=index))
        if series:
            figures.append(_figure(metric, series))
    return tuple(figures)


_SUMMARY_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999))


def quantile_figures(stages: Sequence[Stage], rows: Sequence[Row]) -> tuple[FigureSpec, ...]:
    """The same charts from the summary's quantiles alone (p50 to p99.9), for a run still going,
    whose histograms are not written yet: coarser, and the same numbers."""
    figures = []
    qs = tuple(q for _name, q in _SUMMARY_QUANTILES)
    for metric in DISTRIBUTED_LATENCIES:
        series = []
        for stage in stages:
            latency = stage.latency(metric)
            if latency is not None:
                values = tuple(latency.quantile(name) for name, _q in _SUMMARY_QUANTILES)
                series.append(Series(_label(stage.index, rows), qs, values, stage=stage.index))
        if series:
            figures.append(_figure(metric, series))
    return tuple(figures)
