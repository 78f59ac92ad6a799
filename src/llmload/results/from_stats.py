"""Building ``summary.json``'s objects (``llmload/results/summary.py``) from a stage's statistics.

Latencies are in milliseconds, or None when no request defined that metric (TTFT of a
non-streaming run is absent, not zero).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from llmload.core.health import HealthSnapshot
from llmload.core.phases import Window
from llmload.core.record import CANCELLED, NOT_FAILED, OK, UNFINISHED
from llmload.core.redact import redact_text
from llmload.metrics.aggregate import StageStats
from llmload.metrics.catalog import LATENCY_KEYS
from llmload.metrics.histogram import LogHistogram, SignedHistogram
from llmload.metrics.http_phases import PHASES, HttpPhases
from llmload.metrics.reasoning import ReasoningSide
from llmload.metrics.server_side import ServerSide
from llmload.metrics.sessions import SessionSide
from llmload.protocol.jsonvalue import JSON
from llmload.results.headline import headline
from llmload.results.summary import SCHEMA_VERSION, RunInfo, Saturation, Summary
from llmload.results.summary_stage import (
    Attempts,
    ErrorExample,
    HttpPhasesSummary,
    Latency,
    MeanMax,
    NamedStage,
    ReasoningSummary,
    ReplaySummary,
    Requests,
    ServerMetricsSummary,
    ServerTimingsSummary,
    SessionsSummary,
    SloOutcome,
    Stage,
)

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999))
_MS = 1e6


def latency_ms(h: LogHistogram | SignedHistogram) -> Latency | None:
    if h.count == 0 or h.min is None or h.max is None:
        return None
    values = h.quantiles([q for _name, q in QUANTILES])
    quantiles = {name: round((v or 0) / _MS, 4) for (name, _q), v in zip(QUANTILES, values, strict=True)}
    return Latency(
        count=h.count,
        mean=round((h.mean or 0) / _MS, 4),
        min=round(h.min / _MS, 4),
        max=round(h.max / _MS, 4),
        **quantiles,
    )


def _mean_max(h: LogHistogram) -> MeanMax | None:
    if h.count == 0 or h.max is None or h.mean is None:
        return None
    return MeanMax(mean=round(h.mean, 4), max=float(h.max))


def _token_source(stats: StageStats) -> str | None:
    sources = stats.token_sources
    if not sources:
        return None
    if len(sources) > 1:
        return "mixed"
    (source,) = sources
    # continuous usage is usage too; the per-event precision shows in tokens_per_event
    return "usage" if source in ("usage", "continuous_usage") else source


def stage_summary(
    stats: StageStats,
    *,
    index: int,
    concurrency: int | None,
    duration_s: float,
    client_health: Mapping[str, HealthSnapshot],
    client_bound_by: Sequence[str],
    warnings: Sequence[str],
    window: Window | None = None,
    goodput: bool = False,
    rate: float | None = None,
    slo: Sequence[SloOutcome] | None = None,
    lateness_s: Mapping[str, Mapping[str, float]] | None = None,
    partial: bool = False,
) -> Stage:
    c, o, h = stats.counts, stats.outcomes, stats.hist
    failed = {kind: n for kind, n in sorted(o.items()) if kind not in NOT_FAILED}
    seconds = duration_s if duration_s > 0 else float("nan")
    # Every stage latency the catalog declares, by its field: a new one is a catalog entry
    latencies: dict[str, Any] = {f"{key}_ms": latency_ms(h[key]) for key in LATENCY_KEYS}
    return Stage(
        index=index,
        concurrency=concurrency,
        rate_req_per_s=rate,
        duration_s=round(duration_s, 3),
        window_ns=None if window is None else (window.t0_ns, window.t1_ns),
        requests=_requests(stats, failed),
        errors=failed,
        error_rate=_ratio(sum(failed.values()), sum(o.values())),
        attempts=_attempts(stats),
        error_samples=_error_samples(stats),
        partial=partial,
        finish_reasons=dict(sorted(stats.finish_reasons.items())),
        output_tokens=c.output_tokens,
        window_output_tokens=c.window_output_tokens,
        **_rates(stats, seconds, goodput=goodput),
        prompt_tokens_requested_mean=_ratio(c.prompt_tokens_requested, sum(o.values())),
        cached_prompt_tokens=c.cached_prompt_tokens,
        prompt_cache_hit_rate=_ratio(c.cached_prompt_tokens, c.prompt_tokens_cache_reported),
        token_source=_token_source(stats),
        client_bound=bool(client_bound_by),
        client_bound_by=tuple(client_bound_by),
        client_health=client_health,
        **_shapes(stats),
        warnings=tuple(warnings),
        **latencies,
        ttft_ms_by_label={label: latency_ms(hist) for label, hist in sorted(stats.ttft_by_label.items())},
        slo=None if slo is None else tuple(slo),
        announcement_lateness_s=lateness_s or {},
        by_name={name: _named(n, seconds) for name, n in sorted((stats.by_name or {}).items())},
        server_timings=_server_timings(stats.server_side),
        server_metrics=_server_metrics(stats.server_side),
        http_phases=_http_phases(stats.http_phases),
        reasoning=_reasoning(stats.reasoning, c.output_tokens),
        sessions=_sessions(stats.sessions, duration_s),
        prompt_tokens_counted_vs_requested=_ratio(c.prompt_compared_server, c.prompt_compared_requested),
        output_tokens_vs_max_tokens=_ratio(c.output_tokens_asked, c.max_tokens_asked),
    )


def _error_samples(stats: StageStats) -> dict[str, ErrorExample]:
    """The first answer seen per failure kind, secrets out: the verdict quotes it."""
    return {
        kind: ErrorExample(status=status, message=redact_text(message))
        for kind, (status, message) in sorted(stats.error_samples.items())
    }


class _Rates(TypedDict):
    output_tok_per_s: float | None
    input_tok_per_s: float | None
    total_tok_per_s: float | None
    request_per_s: float | None
    goodput_req_per_s: float | None


class _Shapes(TypedDict):
    tokens_per_event: MeanMax | None
    events_per_read: MeanMax | None
    output_tokens_per_request: MeanMax | None
    prompt_tokens_per_request: MeanMax | None
    images_per_request: MeanMax | None
    image_bytes_per_request: MeanMax | None


def _rates(stats: StageStats, seconds: float, *, goodput: bool) -> _Rates:
    """Tokens and requests per second of the window (``seconds``: NaN for an empty one)."""
    c = stats.counts
    output_rate = c.window_output_tokens / seconds
    input_rate = c.window_prompt_tokens / seconds
    return {
        "output_tok_per_s": _round(output_rate),
        "input_tok_per_s": _round(input_rate),
        "total_tok_per_s": _round(output_rate + input_rate),
        "request_per_s": _round(c.window_completed / seconds),
        "goodput_req_per_s": _round(c.slo_met / seconds) if goodput else None,
    }


def _shapes(stats: StageStats) -> _Shapes:
    """What one request and one read carried, mean and largest."""
    h = stats.hist
    return {
        "tokens_per_event": _mean_max(h["tokens_per_event"]),
        "events_per_read": _mean_max(h["events_per_read"]),
        "output_tokens_per_request": _mean_max(h["output_tokens"]),
        "prompt_tokens_per_request": _mean_max(h["prompt_tokens"]),
        "images_per_request": _mean_max(h["images"]),
        "image_bytes_per_request": _mean_max(h["image_bytes"]),
    }


def _reasoning(side: ReasoningSide, output_tokens: int) -> ReasoningSummary | None:
    if not side.requests:
        return None
    h = side.hist
    return ReasoningSummary(
        requests=side.requests,
        reasoning_tokens=side.tokens,
        answer_tokens=output_tokens - side.tokens,
        reasoning_share=_ratio(side.tokens, output_tokens),
        reasoning_tokens_per_request=_mean_max(h["reasoning_tokens"]),
        answer_tokens_per_request=_mean_max(h["answer_tokens"]),
        think_ms=latency_ms(h["think"]),
        tpot_reasoning_ms=latency_ms(h["tpot_reasoning"]),
        tpot_answer_ms=latency_ms(h["tpot_answer"]),
    )


def _sessions(side: SessionSide, window_s: float) -> SessionsSummary | None:
    if not side:
        return None
    h, ended = side.hist, side.ended
    permille = h["cache_hit_permille"]
    return SessionsSummary(
        completed=ended["completed"],
        failed=ended["failed"],
        unfinished=ended["unfinished"],
        completed_per_s=_ratio(ended["completed"], window_s) if window_s > 0 else None,
        duration_ms=latency_ms(h["duration"]),
        worst_ttft_ms=latency_ms(h["worst_ttft"]),
        turns_per_session=_mean_max(h["turns"]),
        requests_per_session=_mean_max(h["requests"]),
        output_tokens_per_session=_mean_max(h["output_tokens"]),
        cache_hit_rate=None
        if permille.count == 0 or permille.mean is None or permille.max is None
        else MeanMax(mean=round(permille.mean / 1000, 4), max=permille.max / 1000),
        cache_hit_rate_by_turn={
            turn: round(cached / prompt, 4)
            for turn, (prompt, cached) in sorted(side.by_turn.items(), key=lambda kv: _turn_order(kv[0]))
            if prompt
        },
        replay=_replay(side),
    )


def _replay(side: SessionSide) -> ReplaySummary | None:
    r = side.replay
    if not r["sessions"]:
        return None
    return ReplaySummary(
        sessions=r["sessions"],
        turns_live=r["live"],
        turns_spliced=r["spliced"],
        turns_recorded=r["recorded"],
        turns_cut=r["cut"],
        sessions_spliced=r["sessions_spliced"],
    )


def _turn_order(turn: str) -> tuple[int, str]:
    return (int(turn), "") if turn.isdigit() else (1 << 30, turn)


def _server_timings(side: ServerSide) -> ServerTimingsSummary | None:
    if not side.requests:
        return None
    return ServerTimingsSummary(
        requests=side.requests,
        cached_prompt_tokens=side.cache_n,
        prefill_ms=latency_ms(side.prefill),
        decode_per_token_ms=latency_ms(side.decode_per_token),
        ttft_minus_prefill_ms=latency_ms(side.ttft_minus_prefill),
        decode_minus_predicted_ms=latency_ms(side.decode_minus_predicted),
        tpot_minus_server_ms=latency_ms(side.tpot_minus_server),
    )


def _server_metrics(side: ServerSide) -> ServerMetricsSummary | None:
    if not side.metrics_requests:
        return None
    return ServerMetricsSummary(
        requests=side.metrics_requests,
        engine_ttft_ms=latency_ms(side.engine_ttft),
        queue_ms=latency_ms(side.engine_queue),
        queue_share_of_ttft=_ratio(side.queue_ns_total, side.ttft_ns_total),
        ttft_outside_engine_ms=latency_ms(side.ttft_outside_engine),
        mean_itl_ms=latency_ms(side.engine_itl),
        tpot_minus_mean_itl_ms=latency_ms(side.tpot_minus_engine_itl),
        decode_minus_generation_ms=latency_ms(side.decode_minus_generation),
    )


def _http_phases(phases: HttpPhases) -> HttpPhasesSummary | None:
    if not phases.requests:
        return None
    ms = {f"{name}_ms": latency_ms(phases.hist[name]) for name in PHASES}
    return HttpPhasesSummary(requests=phases.requests, new_connections=phases.new_connections, **ms)


def _named(stats: StageStats, seconds: float) -> NamedStage:
    c, o, h = stats.counts, stats.outcomes, stats.hist
    failed = {kind: n for kind, n in sorted(o.items()) if kind not in NOT_FAILED}
    return NamedStage(
        requests=_requests(stats, failed),
        errors=failed,
        output_tokens=c.output_tokens,
        output_tok_per_s=_round(c.window_output_tokens / seconds),
        input_tok_per_s=_round(c.window_prompt_tokens / seconds),
        request_per_s=_round(c.window_completed / seconds),
        ttft_ms=latency_ms(h["ttft"]),
        ttfot_ms=latency_ms(h["ttfot"]),
        itl_ms=latency_ms(h["itl"]),
        tpot_ms=latency_ms(h["tpot"]),
        e2e_ms=latency_ms(h["e2e"]),
        goodput_req_per_s=_round(c.slo_met / seconds),
    )


def _requests(stats: StageStats, failed: Mapping[str, int]) -> Requests:
    o, c = stats.outcomes, stats.counts
    return Requests(
        ok=o[OK],
        failed=sum(failed.values()),
        unfinished=o[UNFINISHED],
        cancelled=o[CANCELLED],
        warmup=c.records_warmup,
        drain=c.records_drain,
    )


def _attempts(stats: StageStats) -> Attempts:
    a = stats.attempts
    errors = {kind: n for kind, n in sorted(a.items()) if kind not in NOT_FAILED}
    return Attempts(
        finished=sum(a.values()) - a[UNFINISHED],
        failed=sum(errors.values()),
        unfinished=a[UNFINISHED],
        cancelled=a[CANCELLED],
        errors=errors,
    )


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 3)  # NaN: an empty window


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 6) if den else None


def reproducibility(seed: int, workers: int) -> dict[str, JSON]:
    """What it takes to rerun this exactly: versions, revision, machine, seed."""
    import os
    import platform
    import subprocess
    from importlib.metadata import PackageNotFoundError, version

    def _version(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    try:
        # the working directory's commit: the revision of whatever repository the run was
        # started from (a deployment's, a CI checkout), which the history keeps beside the run
        git = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
        commit = git.stdout.strip() if git.returncode == 0 and git.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {
        "llmload": _version("llmload"),
        "git_revision": commit and commit[:7],
        "git_commit": commit,
        "host": platform.node() or None,
        "python": platform.python_version(),
        "locust": _version("locust"),
        "gevent": _version("gevent"),
        "cores": os.cpu_count(),
        "workers": workers,
        "seed": seed,
    }


def run_summary(
    *,
    run: RunInfo,
    stages: Sequence[Stage],
    server: Mapping[str, JSON] | None = None,
    complete: bool,
    warnings: Sequence[str] = (),
    stopped_at: Saturation | None = None,
) -> Summary:
    return Summary(
        schema_version=SCHEMA_VERSION,
        complete=complete,
        headline=headline(stages, stopped_at),
        run=run,
        server=server or {},
        stages=tuple(stages),
        warnings=tuple(warnings),
    )
