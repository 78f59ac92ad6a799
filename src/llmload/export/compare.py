"""``llmload compare RUN_A RUN_B [RUN_C ...]``: runs side by side, with ratios to the first.

The numbers come from each run's stage rows (the ``stages.csv`` columns), averaged over repeats
of a level; where both runs repeated the level, Welch's t-test (95%) over the repeats says
whether their difference is beyond the noise the runs themselves measured, and a ratio that is
not is marked ``≈``. Runs without repeats have no measured noise, so none of their differences
is marked. Differences of the servers' fingerprints (engine, version,
launch flags) come right under the headline, next to the numbers they explain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llmload.errors import ConfigError
from llmload.export.rundata import RunData, all_warnings, flatten
from llmload.export.series import LevelStat, by_level
from llmload.export.tables import Row, columns, stage_rows
from llmload.metrics.catalog import PLOTTED_LATENCIES, Column, latency_column
from llmload.metrics.confidence import Interval, differ

NOISE = "≈"
# Fingerprint keys that differ between any two runs without explaining anything.
_VOLATILE = frozenset(
    {
        "port",
        "host",
        "pid",
        "url",
        "started_at",
        "fetched_at",
        "scraped_at",
        "uptime_s",
        "created",
        "warnings",
        "endpoints",
        "engine_evidence",
        "reachable",
    }
)
# Row labels carry the unit: a comparison's tables have no note saying that latencies are in ms.
_STAGE_METRICS = (
    Column("output_tok_per_s", "output tok/s", 1),
    Column("decode_tok_per_s", "decode tok/s per stream", 1),
    latency_column("ttft", "p50", " ms"),
    latency_column("tpot", "p50", " ms"),
)
# only where some run measured them
_EFFICIENCY = columns("usd_per_m_output_tokens", "joules_per_output_token")


@dataclass(frozen=True, slots=True)
class Value:
    value: float | None
    interval: Interval | None = None  # over the level's repeats; None when it ran once
    note: str = ""  # e.g. "at C=128"

    @classmethod
    def of(cls, stat: LevelStat | None, note: str = "") -> Value:
        return cls(None) if stat is None else cls(stat.mean, stat.interval, note)


def is_noise(a: Value, b: Value) -> bool:
    """Both runs were repeated and Welch's t-test finds no difference beyond their noise."""
    return differ(a.interval, b.interval) is False


@dataclass(frozen=True, slots=True)
class CompareRow:
    label: str
    values: tuple[Value, ...]
    digits: int = 1

    def ratios(self) -> tuple[str, ...]:
        """Each run after the first, divided by the first: "2.41x", "≈1.02x" or "-"."""
        base = self.values[0]
        out = []
        for v in self.values[1:]:
            if base.value is None or v.value is None or base.value == 0:
                out.append("-")
            else:
                out.append(f"{NOISE if is_noise(base, v) else ''}{v.value / base.value:.2f}x")
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Comparison:
    runs: tuple[RunData, ...]
    headline: tuple[CompareRow, ...]
    server_diffs: tuple[tuple[str, tuple[str, ...]], ...]  # (key, value per run)
    warnings: tuple[tuple[str, str], ...]  # (run label, warning)
    latency: tuple[CompareRow, ...]
    per_stage: tuple[CompareRow, ...]
    levels: tuple[int, ...]
    rows: tuple[tuple[Row, ...], ...]  # each run's stage rows, for the overlaid plots


def _at(rows: Sequence[Row], column: str, level: int) -> LevelStat | None:
    return next((s for s in by_level(rows, column) if s.concurrency == level and s.mean is not None), None)


def _peak(rows: Sequence[Row]) -> Value:
    stats = [s for s in by_level(rows, "output_tok_per_s") if s.mean is not None]
    best = max(stats, key=lambda s: s.mean or 0.0, default=None)
    return Value.of(best, "" if best is None else f"at C={best.concurrency}")


def _cost_rows(runs: Sequence[RunData], all_rows: Sequence[Sequence[Row]]) -> tuple[CompareRow, ...]:
    """The cheapest stage of each run and its price, when any run was given one."""
    if not any(r.get("usd_per_m_output_tokens") is not None for rows in all_rows for r in rows):
        return ()
    values = []
    for run in runs:
        best = run.summary.headline.cheapest if run.summary.headline else None
        if best is None:
            values.append(Value(None))
        else:
            where = (
                f"C={best.concurrency}" if best.rate_req_per_s is None else f"{best.rate_req_per_s:g} req/s"
            )
            values.append(
                Value(
                    best.usd_per_m_output_tokens, note=f"at {where}" + (" in SLO" if best.under_slo else "")
                )
            )
    return (CompareRow("cheapest $/M output tokens", tuple(values), 4),)


def server_differences(runs: Sequence[RunData]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    flat = [dict(flatten(run.server)) for run in runs]
    keys = sorted(
        {
            k
            for f in flat
            for k in f
            if k.split(".")[-1] not in _VOLATILE and k.split(".")[0] not in _VOLATILE
        },
        key=lambda k: (k not in ("engine", "version"), k),
    )
    return tuple(
        (k, tuple(f.get(k, "-") for f in flat)) for k in keys if len({f.get(k, "-") for f in flat}) > 1
    )


def _levels(all_rows: Sequence[Sequence[Row]]) -> list[int]:
    sets = [{level for r in rows if isinstance(level := r.get("concurrency"), int)} for rows in all_rows]
    return sorted(set[int].intersection(*sets)) if sets else []


def choose_levels(all_rows: Sequence[Sequence[Row]], wanted: Sequence[int] | None) -> tuple[int, ...]:
    """The requested levels, or the lowest, a middle and the highest level common to all runs."""
    common = _levels(all_rows)
    if wanted:
        missing = [c for c in wanted if c not in common]
        if missing:
            raise ConfigError(
                "--stages",
                ",".join(map(str, wanted)),
                f"level {missing[0]} is not in every run (common levels: "
                f"{', '.join(map(str, common)) or 'none'})",
            )
        return tuple(wanted)
    picks = [common[0], common[len(common) // 2], common[-1]] if common else []
    return tuple(dict.fromkeys(picks))


def compare(runs: Sequence[RunData], stages: Sequence[int] | None = None) -> Comparison:
    all_rows = tuple(tuple(stage_rows(run.summary)) for run in runs)
    levels = choose_levels(all_rows, stages)
    headline: tuple[CompareRow, ...] = (
        CompareRow(
            "single-stream output tok/s (C=1)",
            tuple(Value.of(_at(rows, "output_tok_per_s", 1)) for rows in all_rows),
        ),
        CompareRow("peak output tok/s", tuple(_peak(rows) for rows in all_rows)),
    )
    headline += _cost_rows(runs, all_rows)
    latency = []
    for level in levels:
        latency.append(
            CompareRow(
                f"output tok/s at C={level}",
                tuple(Value.of(_at(rows, "output_tok_per_s", level)) for rows in all_rows),
            )
        )
        for metric in PLOTTED_LATENCIES:
            for q in ("p50", "p99"):
                column = latency_column(metric, q, " ms")
                latency.append(
                    CompareRow(
                        f"{column.header} at C={level}",
                        tuple(Value.of(_at(rows, column.key, level)) for rows in all_rows),
                        2,
                    )
                )
    present = [
        c
        for c in _STAGE_METRICS + _EFFICIENCY
        if any(r.get(c.key) is not None for rows in all_rows for r in rows)
    ]
    per_stage = [
        CompareRow(
            f"C={level} {c.header}", tuple(Value.of(_at(rows, c.key, level)) for rows in all_rows), c.digits
        )
        for level in _levels(all_rows)
        for c in present
    ]
    warnings = tuple((run.label, w) for run in runs for w in all_warnings(run.summary))
    return Comparison(
        tuple(runs),
        headline,
        server_differences(runs),
        warnings,
        tuple(latency),
        tuple(per_stage),
        levels,
        all_rows,
    )
