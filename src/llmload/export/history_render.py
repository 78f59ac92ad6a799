"""``llmload history``'s tables: the recorded runs grouped by comparability key, and one key's
trend of one metric, a row per run (docs/history.md). Pure: records in, text out."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from llmload.export.compare_render import text_table
from llmload.results.runrecord import RUN_METRICS, RunRecord, StageRecord


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


def _at_level(record: RunRecord, level: str) -> list[StageRecord]:
    """The run's measured stages at ``level``, every repeat; a stage the run's end cut is left out."""
    return [s for s in record.stages if s.level == level and not s.partial]


def _mean(stages: Sequence[StageRecord], metric: str) -> float | None:
    values = [v for s in stages if (v := s.metric(metric)) is not None]
    return fmean(values) if values else None


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


def trend_table(records: Sequence[RunRecord], metric: str, level: str | None) -> str:
    """One key's runs, oldest first: ``metric`` at ``level`` with its repeats and the change
    from the run before; without a level, the metric at every level, a column each."""
    # the store gives newest first: reversed, runs that started in the same second stay in order
    runs = sorted(reversed(records), key=lambda r: r.started_s or 0.0)
    head = f"key {runs[0].key.hash}: {runs[0].key.describe()}"
    ident = [[r.run_id, _when(r), r.server.name, _labels(r)] for r in runs]
    base = ["run", "started", "engine", "labels"]
    if metric in RUN_METRICS:
        values = [r.run_metric(metric) for r in runs]
        rows = [
            [*i, _number(v), _change(v, p)] for i, v, p in zip(ident, values, [None, *values], strict=False)
        ]
        title = f"{metric}, oldest first"
        return "\n".join([head, title, "", *text_table([*base, metric, "change"], rows, left=(0, 1, 2, 3))])
    if level is None:
        levels = levels_of(runs)
        rows = [
            [*i, *(_number(_mean(_at_level(r, lv), metric), 2) for lv in levels)]
            for i, r in zip(ident, runs, strict=True)
        ]
        title = f"{metric} by level (users, or requests per second), repeats averaged, oldest first"
        return "\n".join([head, title, "", *text_table([*base, *levels], rows, left=(0, 1, 2, 3))])
    rows, before = [], None
    for i, r in zip(ident, runs, strict=True):
        stages = _at_level(r, level)
        value = _mean(stages, metric)
        spread = [v for s in stages if (v := s.metric(metric)) is not None]
        span = f"{min(spread):,.2f}-{max(spread):,.2f}" if len(spread) > 1 else ""
        bound = "client-bound" if any(s.client_bound for s in stages) else ""
        rows.append([*i, _number(value, 2), span, str(len(stages)), _change(value, before), bound])
        before = value if value is not None else before
    title = f"{metric} at level {level}, oldest first"
    headers = [*base, metric, "repeats min-max", "n", "change", "note"]
    return "\n".join([head, title, "", *text_table(headers, rows, left=(0, 1, 2, 3, 8))])
