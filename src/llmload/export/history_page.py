"""``llmload history KEY --html PATH``: one key's trend as a self-contained page (docs/history.md).

Drawn by the report's own chart code (``charts.py``, ``static/charts.js``): a chart per level
and metric, each point a run (x: its number, oldest first), the range over its repeats as a
band, and each change point (``results/changepoints.py``) a dashed line labelled with what
changed. ``static/history.js`` adds what only this page needs: the band, the hovered run's
fingerprint under each chart, and this page's headings. Like the report, everything is inline
and the page's policy forbids every request, so it opens from ``file://`` years later.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib.resources import files

from llmload.export import html as h
from llmload.export.charts import data_json, figure_json, scripts, styles
from llmload.export.history_render import levels_of
from llmload.export.series import FigureSpec, Series
from llmload.export.tables import columns
from llmload.protocol.jsonvalue import JSON
from llmload.results.runrecord import RUN_METRICS, RunRecord
from llmload.results.trend import Trend, oldest_first, trend

# What a serving team looks at first: throughput, the tail of the first token, decode speed
PAGE_METRICS: tuple[str, ...] = ("output_tok_per_s", "ttft_p99_ms", "tpot_p50_ms")
_RUN_TITLES = {"single_stream_tok_per_s": "single-stream tok/s", "peak_tok_per_s": "peak tok/s"}
_COMMIT_CHARS = 12


@cache
def _script() -> str:
    return (files("llmload.export") / "static" / "history.js").read_text(encoding="utf-8")


def page_metrics(chosen: str | None) -> tuple[str, ...]:
    """The page's metrics: the one asked for first, then the rest of ``PAGE_METRICS``."""
    first = chosen or PAGE_METRICS[0]
    return (first, *(m for m in PAGE_METRICS if m != first))


def title_of(metric: str) -> str:
    if metric in RUN_METRICS:
        return _RUN_TITLES[metric]
    header = columns(metric)[0].header
    return header + (" ms" if metric.endswith("_ms") else "")


def level_title(level: str | None) -> str:
    if level is None:
        return "the run's own figure"
    return f"{level.removesuffix('/s')} requests/s" if level.endswith("/s") else f"C={level}"


def trends(runs: Sequence[RunRecord], metrics: Sequence[str], level: str | None) -> list[Trend]:
    """Every chart's trend: a run metric once, a stage metric at ``level`` or at every level."""
    levels = [level] if level is not None else levels_of(runs)
    return [
        trend(runs, metric, lv) for metric in metrics for lv in ([None] if metric in RUN_METRICS else levels)
    ]


def _figure(one: Trend) -> dict[str, JSON]:
    shown = [(n, p) for n, p in enumerate(one.points, start=1) if p.value is not None]
    label = title_of(one.metric)
    spec = FigureSpec(
        name=f"{one.metric}-{one.level or 'run'}",
        title=f"{label} at {level_title(one.level)}",
        xlabel="run (oldest first)",
        ylabel=label,
        series=(Series(label, tuple(float(n) for n, _p in shown), tuple(p.value for _n, p in shown)),),
        # between the run before and the run at the point: where the change happened
        markers=tuple((c.index + 0.5, _marker(c.relative, c.differences)) for c in one.changes),
    )
    figure = figure_json(spec)
    figure["band"] = {"low": [p.low for _n, p in shown], "high": [p.high for _n, p in shown]}
    figure["runs"] = [n - 1 for n, _p in shown]  # each point's run, in the page's runs
    return figure


def _marker(relative: float | None, differences: tuple[str, ...]) -> str:
    change = "" if relative is None else f"{relative * 100:+.1f}%: "
    return change + ("; ".join(differences) or "nothing recorded changed")


def _run_info(n: int, run: RunRecord) -> dict[str, JSON]:
    return {
        "n": n,
        "id": run.run_id,
        "started": run.started_at,
        "engine": run.server.name,
        "labels": " ".join(f"{k}={v}" for k, v in run.labels),
        "commit": None if run.client.git_commit is None else run.client.git_commit[:_COMMIT_CHARS],
        "verdict": run.verdict,
    }


def chart_data(runs: Sequence[RunRecord], drawn: Sequence[Trend]) -> dict[str, JSON]:
    """What history.js reads: the runs, and a section of charts per metric."""
    sections: list[JSON] = []
    # a level no run measured the metric at (TTFT without streaming) is no chart
    drawn = [t for t in drawn if any(p.value is not None for p in t.points)]
    for metric in dict.fromkeys(t.metric for t in drawn):
        sections.append(
            {
                "title": title_of(metric),
                "note": "Each point is a run (hover for its fingerprint): the mean over its repeats "
                "at the level, the band their range. Dashed lines mark change points, labelled "
                "with what changed between the run before and the run after.",
                "figures": [_figure(t) for t in drawn if t.metric == metric],
            }
        )
    return {"runs": [_run_info(n, r) for n, r in enumerate(runs, start=1)], "sections": sections}


def _changes_table(drawn: Sequence[Trend]) -> list[str]:
    rows = [
        [
            title_of(t.metric),
            level_title(t.level),
            c.run_id,
            "; ".join(c.differences) or "nothing recorded changed",
            h.fmt(c.mean_before, 2),
            h.fmt(c.mean_after, 2),
            "-" if c.relative is None else f"{c.relative * 100:+.1f}%",
            f"{c.p_value:.3f}",
        ]
        for t in drawn
        for c in t.changes
    ]
    said = (
        "E-divisive means (Matteson and James, JASA 2014) over each chart's runs: significance "
        "0.01 by 199 permutations, at least 3 runs each side."
    )
    if not rows:
        return [h.heading("Change points"), h.paragraph(f"None found. {said}", "note")]
    headers = ["metric", "level", "first run after", "what changed", "mean before", "mean after"]
    headers += ["change", "p"]
    return [h.heading("Change points"), h.paragraph(said, "note"), h.table(headers, rows, left=4)]


def _runs_table(runs: Sequence[RunRecord]) -> list[str]:
    shown = ("n", "id", "started", "engine", "labels", "commit", "verdict")
    infos = [_run_info(n, r) for n, r in enumerate(runs, start=1)]
    rows = [[str(info[k] or "-") for k in shown] for info in infos]
    headers = ["#", "run", "started", "engine", "labels", "commit", "verdict"]
    return [h.heading("Runs"), h.table(headers, rows, left=len(headers))]


def history_page(records: Sequence[RunRecord], metrics: Sequence[str], level: str | None) -> str:
    """The page of one key's ``records`` (in any order; drawn oldest first)."""
    runs = oldest_first(records)
    key = runs[0].key
    drawn = trends(runs, metrics, level)
    span = f"{runs[0].started_at or '?'} to {runs[-1].started_at or '?'}"
    body = [
        f"<h1>llmload history · key {h.esc(key.hash)}</h1>",
        h.paragraph(f"{key.describe()} · {len(runs)} run(s), {span}", "sub"),
        *_changes_table(drawn),
        '<div id="history-charts"></div>',
        f'<script type="application/json" id="llmload-history">{data_json(chart_data(runs, drawn))}</script>',
        *_runs_table(runs),
    ]
    return h.page(f"llmload history {key.hash}", body, scripts=(*scripts(), _script()), css=styles())
