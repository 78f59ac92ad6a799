"""A sweep's headline from its stages: levels (repeats averaged, with their intervals),
single-stream and peak tok/s, where per-stream speed halves, saturation and the cheapest stage.

Pure, from ``Stage`` objects only: a run computes it when it writes its summary, and
``--until-saturated`` asks it mid-run on the stages so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from llmload.metrics.catalog import latency_stat
from llmload.metrics.confidence import Interval, interval
from llmload.results.cost import cheapest
from llmload.results.saturation import detect
from llmload.results.summary import Headline, Level, Saturation
from llmload.results.summary_stage import Stage


def _decode_tok_per_s(stage: Stage) -> float | None:
    tpot = stage.tpot_ms
    return 1000.0 / tpot.p50 if tpot and tpot.p50 > 0 else None


# The numbers a repeated level gets a confidence interval for, by stages.csv column: its
# throughput and the latency percentiles a comparison quotes.
_INTERVAL_COLUMNS = (
    "output_tok_per_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "tpot_p99_ms",
    "itl_p99_ms",
    "e2e_p99_ms",
)


def _intervals(group: Sequence[Stage]) -> dict[str, Interval]:
    out = {}
    for column in _INTERVAL_COLUMNS:
        if (stat := latency_stat(column)) is None:  # the throughput
            values = [s.output_tok_per_s for s in group if s.output_tok_per_s is not None]
        else:
            metric, q = stat
            values = [lat.quantile(q) for s in group if (lat := s.latency(metric)) is not None]
        if len(values) == len(group) and (found := interval(values)) is not None:
            out[column] = _rounded(found)
    return out


def _rounded(i: Interval) -> Interval:
    return Interval(
        mean=round(i.mean, 4), n=i.n, stdev=round(i.stdev, 4), low=round(i.low, 4), high=round(i.high, 4)
    )


def _mean_p50(group: Sequence[Stage], metric: str) -> float | None:
    values = [m.p50 for m in (s.latency(metric) for s in group) if m is not None]
    return round(sum(values) / len(values), 4) if values else None


def headline(stages: Sequence[Stage], stopped_at: Saturation | None = None) -> Headline:
    """The sweep's answer: single-stream and peak tok/s, where per-stream speed halves, and
    where the server saturates (``llmload/results/saturation.py``).

    Repeated levels are averaged; ``spread`` gives each level's min and max across repeats.
    Open-loop stages are levels by request rate (``rate_req_per_s``) instead of concurrency.
    ``stopped_at``: the saturation that ended the sweep (``--until-saturated``), as decided
    while it ran; the final numbers name the same level unless late reports moved them.
    """
    by_level: dict[tuple[str, float], list[Stage]] = {}
    for stage in stages:
        if stage.output_tok_per_s is None:
            continue
        rate = stage.rate_req_per_s
        key = ("rate", rate) if rate is not None else ("concurrency", stage.concurrency or 0)
        by_level.setdefault(key, []).append(stage)
    levels = []
    for (kind, level), group in sorted(by_level.items()):
        rates = [s.output_tok_per_s for s in group if s.output_tok_per_s is not None]
        speeds = [v for v in map(_decode_tok_per_s, group) if v is not None]
        intervals = _intervals(group)
        levels.append(
            Level(
                concurrency=group[0].concurrency if kind == "concurrency" else None,
                rate_req_per_s=level if kind == "rate" else None,
                output_tok_per_s=round(sum(rates) / len(rates), 3),
                spread=(min(rates), max(rates)),
                decode_tok_per_s=round(sum(speeds) / len(speeds), 3) if speeds else None,
                repeats=len(group),
                intervals=intervals,
                noisy=tuple(k for k, i in intervals.items() if i.noisy),
                ttft_p50_ms=_mean_p50(group, "ttft"),
                tpot_p50_ms=_mean_p50(group, "tpot"),
            )
        )
    single = next((lv for lv in levels if lv.concurrency == 1), None)
    peak = max(levels, key=lambda lv: lv.output_tok_per_s, default=None)
    half = None
    if single is not None and single.decode_tok_per_s:
        limit = single.decode_tok_per_s / 2
        half = next(
            (
                lv.concurrency
                for lv in levels
                if lv.concurrency is not None
                and lv.decode_tok_per_s is not None
                and lv.decode_tok_per_s < limit
            ),
            None,
        )
    return Headline(
        cheapest=cheapest(stages),
        single_stream_tok_per_s=single.output_tok_per_s if single else None,
        peak_tok_per_s=peak.output_tok_per_s if peak else None,
        peak_concurrency=peak.concurrency if peak else None,
        peak_rate_req_per_s=peak.rate_req_per_s if peak else None,
        half_speed_concurrency=half,
        levels=tuple(levels),
        saturation=_saturation(levels, stopped_at),
    )


def _saturation(levels: Sequence[Level], stopped_at: Saturation | None) -> Saturation | None:
    found = detect(levels)
    if stopped_at is None:
        return found
    same = found is not None and (found.concurrency, found.rate_req_per_s) == (
        stopped_at.concurrency,
        stopped_at.rate_req_per_s,
    )
    chosen = found if same and found is not None else stopped_at
    return replace(chosen, stopped_sweep=True, levels_not_run=stopped_at.levels_not_run)
