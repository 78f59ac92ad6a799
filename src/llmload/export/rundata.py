"""Reading a finished run back from its results directory, for the report and the comparison.

Only ``summary.json`` is required; ``timeseries.csv`` is optional (older runs lack it), and keys
a newer or older writer left out are read as absent, never as errors, because a report of an
interrupted run is exactly when the user needs one.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.config.settings import ChecksConfig
from llmload.errors import ResultsError
from llmload.metrics.catalog import LATENCY_KEYS
from llmload.metrics.slo import parse_max_error_rate, parse_slo
from llmload.protocol.jsonvalue import JSON, JSONObject, array, integer, number, obj
from llmload.results.summary import SCHEMA_VERSION, Exit, Summary, read
from llmload.results.summary_stage import Stage
from llmload.results.verdict import judge

SUMMARY = "summary.json"
TIMESERIES = "timeseries.csv"
_TIME_COLUMNS = ("t_s", "stage", "output_tok_per_s", "in_flight")


@dataclass(frozen=True, slots=True)
class TimePoint:
    """One second of ``timeseries.csv``; columns a writer left out are None."""

    t_s: float
    stage: int | None
    phase: str
    output_tok_per_s: float | None
    in_flight: float | None
    requests_ok: float | None
    errors: float | None
    ttft_p50_ms: float | None


@dataclass(frozen=True, slots=True)
class RunData:
    path: Path
    summary: Summary
    timeseries: tuple[TimePoint, ...] | None

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self.summary.stages

    @property
    def server(self) -> Mapping[str, JSON]:
        return self.summary.server

    @property
    def run_id(self) -> str:
        return self.summary.run.id or self.path.name

    @property
    def engine(self) -> str:
        """What the run talked to: engine and version when the server said, else the target."""
        what = " ".join(str(self.server[k]) for k in ("engine", "version") if self.server.get(k))
        return what or self.summary.run.target

    @property
    def label(self) -> str:
        """How a run is named in tables: its id and what it talked to."""
        return f"{self.run_id} ({self.engine})" if self.engine else self.run_id


def read_summary(run_dir: Path) -> Summary:
    path = run_dir / SUMMARY
    if not run_dir.is_dir():
        raise ResultsError(f"{run_dir} is not a results directory")
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise ResultsError(f"{path} is missing: is {run_dir} an llmload results directory?") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ResultsError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("stages"), list):
        raise ResultsError(f"{path} is not an llmload summary (no 'stages' list)")
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ResultsError(
            f"{path} has schema_version {version!r}: written by a newer llmload "
            f"than this one (which reads 1 to {SCHEMA_VERSION}): upgrade llmload"
        )
    try:
        return upgrade(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ResultsError(f"{path} does not have the shape of a version {version} summary: {exc}") from None


def upgrade(summary: JSONObject) -> Summary:
    """A summary of any version this llmload reads, as the current version's objects
    (llmload/results/summary.py; docs/summary.md).

    Version 1 was written before runs had verdicts: no ``exit``, ``run.stopped``, per-stage
    ``attempts``, ``error_samples`` or ``partial``, and (in its early revisions) no rate,
    prefix-cache, goodput or per-label fields. They are filled from what it did record: attempts
    from the measured window's requests (warm-up and drain outcomes were not kept), the verdict
    judged from the checks it recorded, and null or empty for what it never measured.
    """
    if integer(summary.get("schema_version", 1), "schema_version") >= 2:
        return read(summary)
    headline = obj(summary.get("headline") or {}, "headline")
    out: dict[str, JSON] = {
        "complete": True,
        **summary,
        "schema_version": SCHEMA_VERSION,
        "run": {**_V1_RUN, **obj(summary.get("run") or {}, "run")},
        "stages": [_stage_from_v1(obj(stage, "stage")) for stage in array(summary.get("stages") or [])],
        "headline": None
        if not headline
        else {
            "peak_rate_req_per_s": None,
            **headline,
            "levels": [
                {"rate_req_per_s": None, **obj(level, "level")}
                for level in array(headline.get("levels") or [])
            ],
        },
        "warnings": summary.get("warnings") or [],
        "server": summary.get("server") or {},
        "exit": None,
    }
    upgraded = read(out)
    return upgraded.with_exit(verdict_of(upgraded))


_V1_RUN: Mapping[str, JSON] = {
    "id": "",
    "started_at": None,
    "target": "",
    "model": None,
    "scenario": None,
    "options": {},
    "records": [],
    "reproducibility": {},
    "stopped": None,
}
# A stage's fields as a stage that measured nothing has them: what an early version 1 writer
# left out is read so (and tests build stages over it).
UNMEASURED_STAGE: Mapping[str, JSON] = {
    "concurrency": None,
    "duration_s": 0.0,
    "window_ns": None,
    "errors": {},
    "error_rate": None,
    "error_samples": {},
    "partial": False,
    "finish_reasons": {},
    "output_tokens": 0,
    "window_output_tokens": 0,
    "client_bound": False,
    "client_health": {},
    "warnings": [],
    "ttft_ms_by_label": {},
    **dict.fromkeys(
        (
            "output_tok_per_s",
            "input_tok_per_s",
            "total_tok_per_s",
            "request_per_s",
            "goodput_req_per_s",
            "prompt_tokens_requested_mean",
            "cached_prompt_tokens",
            "prompt_cache_hit_rate",
            "token_source",
            "tokens_per_event",
            "events_per_read",
            "output_tokens_per_request",
            "prompt_tokens_per_request",
            "rate_req_per_s",
            *(f"{metric}_ms" for metric in LATENCY_KEYS),
        )
    ),
}


def _stage_from_v1(stage: JSONObject) -> dict[str, JSON]:
    req = {
        **dict.fromkeys(("ok", "failed", "unfinished", "warmup", "drain"), 0),
        **obj(stage.get("requests") or {}, "requests"),
    }
    ok, failed, unfinished = (integer(req[k], f"requests.{k}") for k in ("ok", "failed", "unfinished"))
    attempts: dict[str, JSON] = {
        "finished": ok + failed,
        "failed": failed,
        "unfinished": unfinished,
        "errors": dict(obj(stage.get("errors") or {}, "errors")),
    }
    out = {**UNMEASURED_STAGE, "attempts": attempts, **stage, "requests": req}
    if not isinstance(out.get("announcement_lateness_s"), Mapping):
        # Early version 1 writers kept one number for the whole run, not one per process and
        # phase; it is not carried over rather than given a process it never named.
        out.pop("announcement_lateness_s", None)
    return out


def _number(row: Mapping[str, str | None], key: str, where: str) -> float | None:
    text = (row.get(key) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ResultsError(f"{where}: {key}={text!r} is not a number") from None
    return value if math.isfinite(value) else None


def read_timeseries(path: Path) -> tuple[TimePoint, ...] | None:
    """The per-second series, or None when the run did not write one."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    points = []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in _TIME_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ResultsError(f"{path}: missing columns {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            where = f"{path}:{line}"
            t_s = _number(row, "t_s", where)
            if t_s is None:
                raise ResultsError(f"{where}: t_s is empty")
            stage = _number(row, "stage", where)
            points.append(
                TimePoint(
                    t_s,
                    None if stage is None else int(stage),
                    (row.get("phase") or "").strip(),
                    _number(row, "output_tok_per_s", where),
                    _number(row, "in_flight", where),
                    _number(row, "requests_ok", where),
                    _number(row, "errors", where),
                    _number(row, "ttft_p50_ms", where),
                )
            )
    return tuple(points)


def load_run(run_dir: Path) -> RunData:
    run_dir = Path(run_dir)
    return RunData(run_dir, read_summary(run_dir), read_timeseries(run_dir / TIMESERIES))


def all_warnings(summary: Summary) -> list[str]:
    """Every warning of a run, server and client alike, each saying where it came from."""
    out = []
    if not summary.complete:
        out.append("the run did not complete: later stages are missing or partial")
    out += list(summary.warnings)
    # the run's own warnings already carry the fingerprint's: a server warning is said once
    out += [f"server: {w}" for w in array(summary.server.get("warnings") or []) if w not in summary.warnings]
    for stage in summary.stages:
        if stage.client_bound:
            out.append(
                f"{stage.name} is CLIENT-BOUND: its numbers measure the load generator, not the "
                "server; add workers before publishing them"
            )
        out += [f"{stage.name}: {w}" for w in stage.warnings]
    return out


def flatten(value: JSON, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Nested mappings as dotted ``key: text`` pairs, for fingerprint tables and their diffs."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list | tuple) and not any(isinstance(v, Mapping | list) for v in value):
        yield prefix, ", ".join(_text(v) for v in value)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from flatten(item, f"{prefix}[{i}]")
    else:
        yield prefix, _text(value)


def _text(value: JSON) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def verdict_of(summary: Summary) -> Exit:
    """The verdict the run recorded; for a summary written before verdicts were (or before
    the run was judged), judged now from the checks it recorded."""
    if summary.exit is not None:
        return summary.exit
    return judge(summary, checks_of(summary)).to_exit()


def checks_of(summary: Summary) -> ChecksConfig:
    """The checks a run was judged by, as its summary records them."""
    checks = obj(summary.run.options.get("checks") or {}, "options.checks")
    rate = checks.get("max_error_rate")
    return ChecksConfig(
        parse_slo(",".join(str(rule) for rule in array(checks.get("slo") or []))),
        parse_max_error_rate(rate if rate is None or isinstance(rate, str) else number(rate)),
        bool(checks.get("fail_on_client_bound")),
    )
