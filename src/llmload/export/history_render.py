"""``llmload history``'s tables: the recorded runs grouped by comparability key, and one key's
trend of one metric, a row per run (docs/history.md). Pure: records in, text out."""

from __future__ import annotations

from collections.abc import Sequence

from llmload.export.compare_render import text_table
from llmload.results.changepoints import ChangePoint
from llmload.results.runrecord import RUN_METRICS, RunRecord
from llmload.results.trend import oldest_first, trend


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _when(record: RunRecord) -> str:
    """The start as the run wrote it, to the minute (its own clock's offset left out)."""
    return "-" if not record.started_at else record.started_at[:16].replace("T", " ")


def _labels(record: RunRecord) -> str:
    return " ".join(f"{k}={v}" for k, v in record.labels) or "-"


def _verdict(record: RunRecord) -> str:
    said = record.verdict or "-"
    return said if record.complete else f"{said} (incomplete)"


def _peak(record: RunRecord) -> str:
    at = "" if record.peak_concurrency is None else f" @{record.peak_concurrency}"
    return _number(record.peak_tok_per_s) + (at if record.peak_tok_per_s is not None else "")


def runs_table(records: Sequence[RunRecord], where: str) -> str:
    """Every run, grouped by key; the group with the newest run first, runs newest first."""
    if not records:
        return f"llmload history: no runs recorded in {where} yet"
    groups: dict[str, list[RunRecord]] = {}
    for record in records:  # newest first already: a group's place is its newest run's
        groups.setdefault(record.key.hash, []).append(record)
    lines = [f"llmload history: {len(records)} run(s) of {len(groups)} key(s) in {where}"]
    headers = ["run", "started", "engine", "labels", "single tok/s", "peak tok/s", "verdict"]
    for key, runs in groups.items():
        lines += ["", f"key {key}: {runs[0].key.describe()}"]
        rows = [
            [
                r.run_id,
                _when(r),
                r.server.name,
                _labels(r),
                _number(r.single_stream_tok_per_s),
                _peak(r),
                _verdict(r),
            ]
            for r in runs
        ]
        lines += ["  " + line for line in text_table(headers, rows, left=(0, 1, 2, 3, 6))]
    lines += ["", "a key's trend: llmload history KEY [--metric NAME] [--level N]"]
    return "\n".join(lines)


def _change(value: float | None, before: float | None) -> str:
    if value is None or before is None or before == 0:
        return ""
    return f"{(value / before - 1) * 100:+.1f}%"


def levels_of(records: Sequence[RunRecord]) -> list[str]:
    """Every level the runs measured, users first (ascending), then rates."""
    found = {
        s.level: (s.concurrency is None, s.concurrency or s.rate_req_per_s or 0.0)
        for r in records
        for s in r.stages
    }
    return sorted(found, key=lambda level: found[level])


def _marks(changes: Sequence[ChangePoint], run: RunRecord, level: str | None = None) -> str:
    """The change points at ``run``, for its row's note."""
    at = f" at {level}" if level is not None else ""
    return " | ".join(f"change point{at} {c.describe()}" for c in changes if c.run_id == run.run_id)


def trend_table(records: Sequence[RunRecord], metric: str, level: str | None) -> str:
    """One key's runs, oldest first: ``metric`` at ``level`` with its repeats and the change
    from the run before; without a level, the metric at every level, a column each. The note
    marks the change points (``results/changepoints.py``) at the run after each change."""
    runs = oldest_first(records)
    head = f"key {runs[0].key.hash}: {runs[0].key.describe()}"
    ident = [[r.run_id, _when(r), r.server.name, _labels(r)] for r in runs]
    base = ["run", "started", "engine", "labels"]
    if metric in RUN_METRICS:
        one = trend(runs, metric, None)
        values = [p.value for p in one.points]
        rows = [
            [*i, _number(v), _change(v, p), _marks(one.changes, r)]
            for i, v, p, r in zip(ident, values, [None, *values], runs, strict=False)
        ]
        title = f"{metric}, oldest first"
        headers = [*base, metric, "change", "note"]
        return "\n".join([head, title, "", *text_table(headers, rows, left=(0, 1, 2, 3, 6))])
    if level is None:
        levels = levels_of(runs)
        trends = [trend(runs, metric, lv) for lv in levels]
        rows = [
            [
                *i,
                *(_number(t.points[n].value, 2) for t in trends),
                " | ".join(m for t in trends if (m := _marks(t.changes, r, t.level))),
            ]
            for n, (i, r) in enumerate(zip(ident, runs, strict=True))
        ]
        title = f"{metric} by level (users, or requests per second), repeats averaged, oldest first"
        headers = [*base, *levels, "note"]
        return "\n".join([head, title, "", *text_table(headers, rows, left=(0, 1, 2, 3, len(headers) - 1))])
    one, rows, before = trend(runs, metric, level), [], None
    for i, point in zip(ident, one.points, strict=True):
        value = point.value
        low, high = point.low, point.high
        span = f"{low:,.2f}-{high:,.2f}" if point.repeats > 1 and low is not None and high is not None else ""
        notes = ["client-bound" if point.client_bound else "", _marks(one.changes, point.run)]
        note = "; ".join(n for n in notes if n)
        rows.append([*i, _number(value, 2), span, str(point.repeats), _change(value, before), note])
        before = value if value is not None else before
    title = f"{metric} at level {level}, oldest first"
    headers = [*base, metric, "repeats min-max", "n", "change", "note"]
    return "\n".join([head, title, "", *text_table(headers, rows, left=(0, 1, 2, 3, 8))])
