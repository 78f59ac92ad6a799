"""One run as the results store keeps it (docs/history.md), read from its ``Summary`` alone.

``summary.json`` stays the source of truth: the record is a function of it (and of the labels
``llmload history reindex --label`` adds), so a store rebuilt from results directories holds
what the runs recorded when they ended. The record is the few numbers people gate and plot a
trend on, per stage and per repeat, and what tells two runs apart: the comparability key
(``comparable.py``), the server's fingerprint, the client and its working directory's commit,
the labels and the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from llmload.protocol.jsonvalue import JSON
from llmload.results.comparable import ComparabilityKey, key_of
from llmload.results.summary import Summary
from llmload.results.summary_stage import Latency, Stage

# The per-stage numbers a record keeps, by their stages.csv names
METRICS: tuple[str, ...] = (
    "output_tok_per_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "tpot_p99_ms",
    "itl_p99_ms",
    "e2e_p50_ms",
    "error_rate",
    "goodput_req_per_s",
)
# Per run: the headline's figures, which have no level
RUN_METRICS: tuple[str, ...] = ("single_stream_tok_per_s", "peak_tok_per_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRecord:
    index: int
    repeat: int  # 0 for the first stage at its level, 1 for the second (--repeat), ...
    concurrency: int | None
    rate_req_per_s: float | None  # open-loop stages
    output_tok_per_s: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    tpot_p50_ms: float | None
    tpot_p99_ms: float | None
    itl_p99_ms: float | None
    e2e_p50_ms: float | None
    error_rate: float | None
    goodput_req_per_s: float | None  # requests that met every request-level SLO, per second
    requests_ok: int
    requests_failed: int
    client_bound: bool
    partial: bool  # cut by the end of the run

    def metric(self, name: str) -> float | None:
        """One of ``METRICS`` by name."""
        value: float | None = getattr(self, name)
        return value

    @property
    def level(self) -> str:
        """The load it ran at, as ``--level`` names it: ``32`` users, or ``2.5/s`` requests."""
        return level_name(self.concurrency, self.rate_req_per_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerPrint:
    """What the server said about itself (``summary["server"]``, target/fingerprint.py)."""

    engine: str | None
    version: str | None
    models: tuple[str, ...]
    launch_args: JSON  # as the fingerprint found them: an object, or null

    @property
    def name(self) -> str:
        return " ".join(p for p in (self.engine, self.version) if p) or "-"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientInfo:
    version: str | None  # llmload's
    host: str | None
    git_commit: str | None  # of the directory the run was started in, if it was a repository


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    run_id: str
    started_at: str | None  # as summary.json has it: local time with its offset
    started_s: float | None  # the same, as Unix time: what orders a trend
    results_dir: str
    key: ComparabilityKey
    server: ServerPrint
    client: ClientInfo
    labels: tuple[tuple[str, str], ...]
    exit_code: int | None
    verdict: str | None  # the exit code's name: ok, slo_missed, ...
    verdict_line: str | None
    complete: bool
    single_stream_tok_per_s: float | None
    peak_tok_per_s: float | None
    peak_concurrency: int | None
    stages: tuple[StageRecord, ...]

    def run_metric(self, name: str) -> float | None:
        """One of ``RUN_METRICS`` by name."""
        value: float | None = getattr(self, name)
        return value


def level_name(concurrency: int | None, rate_req_per_s: float | None) -> str:
    if concurrency is not None:
        return str(concurrency)
    return "-" if rate_req_per_s is None else f"{rate_req_per_s:g}/s"


def record_of(summary: Summary, results_dir: str, labels: Mapping[str, str] | None = None) -> RunRecord:
    """The run's record; ``labels`` are added to (and override) those the run was given."""
    merged = {**run_labels(summary), **(labels or {})}
    head = summary.headline
    repro = summary.run.reproducibility
    return RunRecord(
        run_id=summary.run.id,
        started_at=summary.run.started_at,
        started_s=unix_time(summary.run.started_at),
        results_dir=results_dir,
        key=key_of(summary, merged),
        server=server_print(summary.server),
        client=ClientInfo(
            version=_text(repro.get("llmload")),
            host=_text(repro.get("host")),
            # older summaries kept only the short revision
            git_commit=_text(repro.get("git_commit")) or _text(repro.get("git_revision")),
        ),
        labels=tuple(merged.items()),
        exit_code=None if summary.exit is None else summary.exit.code,
        verdict=None if summary.exit is None else summary.exit.name,
        verdict_line=None if summary.exit is None else summary.exit.line,
        complete=summary.complete,
        single_stream_tok_per_s=None if head is None else head.single_stream_tok_per_s,
        peak_tok_per_s=None if head is None else head.peak_tok_per_s,
        peak_concurrency=None if head is None else head.peak_concurrency,
        stages=stage_records(summary.stages),
    )


def run_labels(summary: Summary) -> dict[str, str]:
    """The labels the run was given (``--label``), as its options record them."""
    history = summary.run.options.get("history")
    given = history.get("labels") if isinstance(history, Mapping) else None
    if not isinstance(given, Mapping):
        return {}
    return {str(k): str(v) for k, v in given.items() if v is not None}


def stage_records(stages: tuple[Stage, ...]) -> tuple[StageRecord, ...]:
    seen: Counter[str] = Counter()
    out = []
    for stage in stages:
        level = level_name(stage.concurrency, stage.rate_req_per_s)
        out.append(_stage(stage, seen[level]))
        seen[level] += 1
    return tuple(out)


def _stage(stage: Stage, repeat: int) -> StageRecord:
    return StageRecord(
        index=stage.index,
        repeat=repeat,
        concurrency=stage.concurrency,
        rate_req_per_s=stage.rate_req_per_s,
        output_tok_per_s=stage.output_tok_per_s,
        ttft_p50_ms=_q(stage.ttft_ms, "p50"),
        ttft_p99_ms=_q(stage.ttft_ms, "p99"),
        tpot_p50_ms=_q(stage.tpot_ms, "p50"),
        tpot_p99_ms=_q(stage.tpot_ms, "p99"),
        itl_p99_ms=_q(stage.itl_ms, "p99"),
        e2e_p50_ms=_q(stage.e2e_ms, "p50"),
        error_rate=stage.error_rate,
        goodput_req_per_s=stage.goodput_req_per_s,
        requests_ok=stage.requests.ok,
        requests_failed=stage.requests.failed,
        client_bound=stage.client_bound,
        partial=stage.partial,
    )


def _q(latency: Latency | None, name: str) -> float | None:
    # a latency of no request (count 0) is no measurement, whatever its fields hold
    return None if latency is None or not latency.count else latency.quantile(name)


def server_print(server: Mapping[str, JSON]) -> ServerPrint:
    models = server.get("models")
    return ServerPrint(
        engine=_text(server.get("engine")),
        version=_text(server.get("version")),
        models=tuple(
            str(m.get("id")) if isinstance(m, Mapping) else str(m)
            for m in (models if isinstance(models, list | tuple) else ())
        ),
        launch_args=server.get("launch_args"),
    )


def unix_time(stamp: str | None) -> float | None:
    """``2025-06-01T10:00:00+0000`` (how summary.json writes the start) as Unix time."""
    if not stamp:
        return None
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return None


def _text(value: JSON) -> str | None:
    return None if value is None or value == "" else str(value)
