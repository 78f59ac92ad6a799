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
from typing import Any

import orjson

from llmload.config import ChecksConfig
from llmload.errors import ResultsError
from llmload.export.summary import SCHEMA_VERSION
from llmload.metrics.slo import parse_max_error_rate, parse_slo
from llmload.verdict import judge

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
    summary: Mapping[str, Any]
    timeseries: tuple[TimePoint, ...] | None

    @property
    def stages(self) -> list[Mapping[str, Any]]:
        return list(self.summary.get("stages") or [])

    @property
    def server(self) -> Mapping[str, Any]:
        return self.summary.get("server") or {}

    @property
    def run_id(self) -> str:
        return str((self.summary.get("run") or {}).get("id") or self.path.name)

    @property
    def engine(self) -> str:
        """What the run talked to: engine and version when the server said, else the target."""
        what = " ".join(str(self.server[k]) for k in ("engine", "version") if self.server.get(k))
        return what or str((self.summary.get("run") or {}).get("target") or "")

    @property
    def label(self) -> str:
        """How a run is named in tables: its id and what it talked to."""
        return f"{self.run_id} ({self.engine})" if self.engine else self.run_id


def read_summary(run_dir: Path) -> dict[str, Any]:
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
    return upgrade(data)


def upgrade(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary of any version this llmload reads, in the current version's shape
    (docs/summary.md, docs/summary.schema.json); the newest is returned as it is.

    Version 1 was written before runs had verdicts: no ``exit``, ``run.stopped``, per-stage
    ``attempts``, ``error_samples`` or ``partial``, and (in its early revisions) no rate,
    prefix-cache, goodput or per-label fields. They are filled from what it did record: attempts
    from the measured window's requests (warm-up and drain outcomes were not kept), the verdict
    judged from the checks it recorded, and null for what it never measured.
    """
    if summary.get("schema_version", 1) >= 2:
        return summary
    out = dict(summary)
    out["run"] = {"stopped": None, **(summary.get("run") or {})}
    out["stages"] = [_stage_from_v1(stage) for stage in summary.get("stages") or []]
    headline = summary.get("headline")
    if headline:
        out["headline"] = {
            "peak_rate_req_per_s": None,
            **headline,
            "levels": [{"rate_req_per_s": None, **level} for level in headline.get("levels") or []],
        }
    out.setdefault("headline", None)
    out.setdefault("warnings", [])
    out.setdefault("server", {})
    out["schema_version"] = SCHEMA_VERSION
    out["exit"] = verdict_of(out)
    return out


def _stage_from_v1(stage: Mapping[str, Any]) -> dict[str, Any]:
    req = stage.get("requests") or {}
    errors = dict(stage.get("errors") or {})
    attempts = {
        "finished": int(req.get("ok", 0)) + int(req.get("failed", 0)),
        "failed": int(req.get("failed", 0)),
        "unfinished": int(req.get("unfinished", 0)),
        "errors": errors,
    }
    unknown = ("rate_req_per_s", "goodput_req_per_s", "cached_prompt_tokens", "prompt_cache_hit_rate")
    return {
        **dict.fromkeys(unknown),
        "attempts": attempts,
        "error_samples": {},
        "partial": False,
        "ttft_ms_by_label": {},
        "warnings": [],
        **stage,
    }


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


def stage_name(stage: Mapping[str, Any]) -> str:
    level = stage.get("concurrency")
    return f"stage {stage.get('index', '?')}" + ("" if level is None else f" (C={level})")


def all_warnings(summary: Mapping[str, Any]) -> list[str]:
    """Every warning of a run, server and client alike, each saying where it came from."""
    out = []
    if summary.get("complete") is False:
        out.append("the run did not complete: later stages are missing or partial")
    out += [str(w) for w in summary.get("warnings") or []]
    out += [f"server: {w}" for w in (summary.get("server") or {}).get("warnings") or []]
    for stage in summary.get("stages") or []:
        name = stage_name(stage)
        if stage.get("client_bound"):
            out.append(
                f"{name} is CLIENT-BOUND: its numbers measure the load generator, not the "
                "server; add workers before publishing them"
            )
        out += [f"{name}: {w}" for w in stage.get("warnings") or []]
    return out


def spec_decode(stage: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """The server's speculative-decoding (acceptance rate, mean acceptance length) of a stage.

    Looked up tolerantly: flat in ``stage.server`` or one level down (``spec_decode``), under
    vLLM's names or SGLang's accept-length gauge (target/scrape.py writes both).
    """
    server = stage.get("server")
    if not isinstance(server, Mapping):
        return None, None
    places = [server, *(v for v in server.values() if isinstance(v, Mapping))]
    rate = _first(places, ("acceptance_rate", "spec_decode_acceptance_rate", "accept_rate"))
    length = _first(
        places,
        (
            "mean_acceptance_length",
            "acceptance_length",
            "accept_length",
            "spec_accept_length",
            "accept_length_gauge_mean",
        ),
    )
    return rate, length


def _first(places: list[Mapping[str, Any]], keys: tuple[str, ...]) -> float | None:
    for place in places:
        for key in keys:
            value = place.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
    return None


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
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


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def verdict_of(summary: Mapping[str, Any]) -> Mapping[str, Any]:
    """The verdict the run recorded; for a summary written before verdicts were, judged now
    from the checks it recorded."""
    if summary.get("exit"):
        return dict(summary["exit"])
    checks = ((summary.get("run") or {}).get("options") or {}).get("checks") or {}
    config = ChecksConfig(
        parse_slo(",".join(checks.get("slo") or [])),
        parse_max_error_rate(checks.get("max_error_rate")),
        bool(checks.get("fail_on_client_bound")),
    )
    return judge(summary, config).to_json()
