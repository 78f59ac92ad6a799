"""llmload's tabs in Locust's web UI, as the tables Locust's own page draws.

Locust 2.x's page takes extra tabs from its template arguments (``extended_tabs``, each a table
whose columns ``extended_tables`` declares) and fills them from ``extended_stats`` in the
``/stats/requests`` answer it polls every two seconds; ``extended_csv_files`` adds download
links. Those are its supported extension points, so llmload's tabs are tables: the current
stage (``llm``), every stage so far (``llm-stages``, the sweep table as it grows) and the last
minute second by second (``llm-timeline``). Cells are text, formatted here, so the page shows
what the report would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmload.export.charts import chart_data
from llmload.export.distributions import quantile_figures
from llmload.export.html import fmt
from llmload.export.rundata import TimePoint
from llmload.export.series import report_figures
from llmload.export.tables import columns, stage_row
from llmload.metrics.catalog import TABLE_LATENCIES, Column, by_key, latency_column
from llmload.metrics.timeseries import TimeRow
from llmload.protocol.jsonvalue import JSON
from llmload.results.summary_stage import Stage

Rows = list[dict[str, str]]
TIMELINE_S = 60  # per-second rows the timeline tab shows


@dataclass(frozen=True, slots=True)
class Live:
    run_id: str
    phase: str  # the current stage's phase ("" before the first announcement)
    gauges: Mapping[str, float]  # the exporter's: users, in_flight, workers, stage, concurrency
    health: Mapping[str, Mapping[str, float | None]]  # per process, since the window opened
    stages: tuple[Stage, ...]  # every stage so far; the current one summarised up to now
    timeline: tuple[TimeRow, ...]  # the last TIMELINE_S seconds, oldest first


_NOW = (
    Column("what", "LLM (current stage)"),
    Column("value", "value"),
    Column("p50", "p50"),
    Column("p90", "p90"),
    Column("p99", "p99"),
)
# stages.csv's columns (fewer than the report shows), so that a cell reads as it does there.
_STAGES = columns(
    "index",
    "concurrency",
    "window_s",
    "requests_ok",
    "requests_failed",
    "output_tok_per_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "itl_p50_ms",
    "itl_p99_ms",
    "tpot_p50_ms",
    "e2e_p50_ms",
    "decode_tok_per_s",
    "client_bound",
)
_TIMELINE = (
    Column("t_s", "t s"),
    Column("stage", "stage"),
    Column("phase", "phase"),
    Column("output_tok_per_s", "out tok/s"),
    Column("in_flight", "in flight"),
    Column("requests_ok", "ok"),
    Column("errors", "errors"),
    latency_column("ttft", "p50", " ms"),
)

REPORT_PATH = "/llmload/report"
SUMMARY_PATH = "/llmload/summary.json"
CHARTS_PATH = "/llmload/charts.json"


def template_args() -> dict[str, JSON]:
    """What Locust's page needs to draw llmload's tabs and links (its template arguments)."""

    def structure(table: Sequence[Column]) -> list[dict[str, str]]:
        return [{"key": c.key, "title": c.header} for c in table]

    return {
        "extended_tabs": [
            {"title": "LLM", "key": "llm"},
            {"title": "LLM stages", "key": "llm-stages"},
            {"title": "LLM timeline", "key": "llm-timeline"},
        ],
        "extended_tables": [
            {"key": "llm", "structure": structure(_NOW)},
            {"key": "llm-stages", "structure": structure(_STAGES)},
            {"key": "llm-timeline", "structure": structure(_TIMELINE)},
        ],
        "extended_csv_files": [
            {"href": f".{REPORT_PATH}", "title": "llmload report.html of the last finished run"},
            {"href": f".{SUMMARY_PATH}", "title": "llmload summary.json of the last finished run"},
        ],
    }


def extended_stats(live: Live | None) -> list[dict[str, JSON]]:
    """The three tables' rows (``extended_stats`` of ``/stats/requests``); empty tables
    before a run has started."""
    return [
        {"key": "llm", "data": now_rows(live) if live else []},
        {"key": "llm-stages", "data": [_cells(stage_row(s), _STAGES) for s in live.stages] if live else []},
        {
            "key": "llm-timeline",
            "data": [_cells(r, _TIMELINE) for r in reversed(live.timeline)] if live else [],
        },
    ]


def now_rows(live: Live) -> Rows:
    stage = live.stages[-1] if live.stages else None
    g = live.gauges
    rows = [
        _row("run", live.run_id),
        _row("stage", "-" if stage is None else f"{stage.name} · {live.phase}"),
        _row("users", fmt(int(g.get("users", 0)))),
        _row("requests in flight", fmt(int(g.get("in_flight", 0)))),
    ]
    if g.get("workers"):
        rows.append(_row("workers", fmt(int(g["workers"]))))
    if live.timeline:
        # the last whole second (the newest row is the second still being filled)
        latest = live.timeline[-2] if len(live.timeline) > 1 else live.timeline[-1]
        rows.append(_row("output tok/s, last second", fmt(_number(latest.get("output_tok_per_s")), 0)))
    if stage is None:
        return rows
    rows.append(_row("output tok/s, stage window", fmt(stage.output_tok_per_s)))
    for metric in TABLE_LATENCIES:
        latency = stage.latency(metric)
        if latency is not None:
            rows.append(
                _row(
                    f"{by_key(metric).short} ms (n={latency.count:,})",
                    fmt(latency.mean, 2),
                    *(fmt(latency.quantile(q), 2) for q in ("p50", "p90", "p99")),
                )
            )
    tpe = stage.tokens_per_event
    rows.append(_row("tokens per event (mean)", "-" if tpe is None else fmt(tpe.mean, 2)))
    rows.append(
        _row(
            "requests ok / failed / unfinished",
            f"{stage.requests.ok:,} / {stage.requests.failed:,} / {stage.requests.unfinished:,}",
        )
    )
    rows += [_row(f"errors: {kind}", fmt(n)) for kind, n in stage.attempts.errors.items()]
    rows.append(_row("client-bound", _client_bound(stage)))
    rows += _health_rows(live.health)
    return rows


def _client_bound(stage: Stage) -> str:
    if not stage.client_bound:
        return "no"
    return f"YES ({', '.join(stage.client_bound_by)}): these numbers measure the load generator"


def _health_rows(health: Mapping[str, Mapping[str, float | None]]) -> Rows:
    return [
        _row(
            f"client {process}: loop lag p99 ms · CPU %",
            f"{fmt(snap.get('loop_lag_p99_ms'), 2)} · {fmt(snap.get('cpu_percent'), 0)}",
        )
        for process, snap in sorted(health.items())
    ]


def _row(what: str, value: str, *quantiles: str) -> dict[str, str]:
    row = {"what": what, "value": value}
    row.update(zip(("p50", "p90", "p99"), quantiles, strict=False))
    return row


def _cells(values: Mapping[str, object], table: Sequence[Column]) -> dict[str, str]:
    return {
        c.key: fmt(_number(values.get(c.key)), c.digits)
        if c.key != "phase"
        else str(values.get(c.key) or "-")
        for c in table
    }


def _number(value: object) -> float | int | None:
    return value if isinstance(value, int | float) else None


def _point(row: TimeRow) -> TimePoint:
    def number(key: str) -> float | None:
        value = _number(row.get(key))
        return None if value is None else float(value)

    stage = row.get("stage")
    return TimePoint(
        t_s=number("t_s") or 0.0,
        stage=stage if isinstance(stage, int) and stage >= 0 else None,
        phase=str(row.get("phase") or ""),
        output_tok_per_s=number("output_tok_per_s"),
        in_flight=number("in_flight"),
        requests_ok=number("requests_ok"),
        errors=number("errors"),
        ttft_p50_ms=number("ttft_p50_ms"),
    )


def live_charts(live: Live | None) -> dict[str, JSON]:
    """The report's charts for a run still going (``CHARTS_PATH``, which the LLM tab polls):
    the last minute second by second, the stages so far against concurrency, and each stage's
    distributions from its summary quantiles (the histograms are written at the end)."""
    if live is None:
        return chart_data(())
    rows = [stage_row(s) for s in live.stages]
    points = tuple(_point(r) for r in live.timeline)
    return chart_data((*quantile_figures(live.stages, rows), *report_figures(rows, points)))
