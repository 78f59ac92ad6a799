"""Assemble ``summary.json`` from stage views (its types are in llmload/results/summary.py).

A ``StageView`` is one stage as the summarising process knows it: the single process's own
stage, or the master's merge of every worker's deltas. Both summarise the same way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import msgspec

from llmload.config.asked import WorkloadConfig
from llmload.config.settings import ChecksConfig, RunConfig
from llmload.core.health import HealthLimits, HealthSnapshot, is_client_bound
from llmload.core.phases import Window
from llmload.core.redact import redact_text, redact_url
from llmload.core.stop import FailedFast, Interrupted, Refused, Stopped
from llmload.metrics.aggregate import StageStats
from llmload.metrics.catalog import by_key
from llmload.protocol.jsonvalue import JSON
from llmload.results.cost import stage_cost
from llmload.results.fairness import tenants_summary
from llmload.results.from_stats import reproducibility, run_summary, stage_summary
from llmload.results.slo import evaluate
from llmload.results.summary import LostWorker, RunInfo, Saturation, Summary, WorkerClock
from llmload.results.summary_stage import SloOutcome, Stage


@dataclass(slots=True)
class StageView:
    index: int
    concurrency: int
    stats: StageStats
    window_s: float
    measured: bool  # did the window ever open?
    health: dict[str, HealthSnapshot] = field(default_factory=dict)  # per process
    lateness_s: dict[str, Mapping[str, float]] = field(default_factory=dict)  # per process, phase
    window: Window | None = None  # the local window, when there is one process
    rate: float | None = None  # open-loop stages: requests per second


# Above this share of prompt tokens served from the server's cache, prompts meant to be unique
# are not: a chat template's shared head is a few percent of a prompt, never half.
CACHE_HIT_LIMIT = 0.5


def cache_warning(hit_rate: float | None, workload: WorkloadConfig, source: str) -> str | None:
    """Prompts meant to be unique that a prefix cache answers: TTFT measures cache hits. Recorded
    agent sessions (--agent-trace) are not: they share their instructions and tools, and a
    session is replayed again by the next user to reach it."""
    intends_unique = (
        not workload.prefix_cache
        and not workload.prefix.groups
        and workload.dataset is None
        and workload.agent.trace is None
    )
    if hit_rate is None or hit_rate <= CACHE_HIT_LIMIT or not intends_unique:
        return None
    return (
        f"{source}: the prefix cache served {hit_rate:.0%} of the prompt tokens of prompts "
        "meant to be unique, so TTFT measures cache hits (a --salt reused from an earlier run?)"
    )


# Requested against counted lengths: beyond this relative difference the stage says so.
LENGTH_TOLERANCE = 0.02


def _length_fix(tokenize: str, asked: str) -> str:
    """What to do about prompts the server counted otherwise, by what ``--tokenize`` came to
    (``tokenize``) and what was asked (``asked``): ``auto`` unresolved where nobody asked yet."""
    by_file = "the model's tokenizer.json (--tokenize FILE) builds prompts to its count"
    if tokenize == "off" and asked == "auto":
        return f"the server offers no /tokenize: {by_file}"
    if tokenize == "off":
        return "--tokenize server (or the model's tokenizer.json) builds prompts to the server's count"
    if tokenize == "auto":
        return f"where the server offers no /tokenize prompts are words: {by_file}"
    return "the --tokenize calibration missed: is the tokenizer the server's?"


def length_warnings(stage: Stage, ignore_eos: bool, tokenize: str, asked: str | None = None) -> list[str]:
    """Prompts the server counted at another length than asked, and outputs cut short of
    max_tokens although ``ignore_eos`` was asked: the workload was not the one requested.
    ``tokenize``: what ``--tokenize`` came to (``auto`` resolved), ``asked`` what was given."""
    out = []
    ratio = stage.prompt_tokens_counted_vs_requested
    if ratio is not None and abs(ratio - 1) > LENGTH_TOLERANCE:
        fix = _length_fix(tokenize, tokenize if asked is None else asked)
        out.append(
            f"the server counted {ratio:.1%} of the prompt tokens asked (mean "
            f"{stage.prompt_tokens_requested_mean or 0:,.1f} asked): {fix}"
        )
    served = stage.output_tokens_vs_max_tokens
    if ignore_eos and served is not None and served < 1 - LENGTH_TOLERANCE:
        out.append(
            f"ignore_eos was asked but outputs came back at {served:.1%} of max_tokens: the server "
            "(or a gateway before it) does not honour ignore_eos, so outputs are shorter than asked"
        )
    return out


# A connection per request is worth a word once at least this share of requests opened one and
# opening it cost at least this share of the TTFT they then waited.
NEW_CONNECTION_SHARE = 0.5
CONNECT_SHARE_OF_TTFT = 0.1


def connection_warning(stage: Stage) -> str | None:
    """Connections opened per request, costing a noticeable share of TTFT: a client without
    keep-alive, or a server or gateway that closes connections, adds it to every request."""
    phases, first = stage.http_phases, stage.ttft_ms or stage.e2e_ms
    if phases is None or first is None or phases.tcp_connect_ms is None:
        return None
    share = phases.new_connections / phases.requests
    tcp, tls = phases.tcp_connect_ms.p50, phases.tls_ms.p50 if phases.tls_ms is not None else 0.0
    if share < NEW_CONNECTION_SHARE or tcp + tls < CONNECT_SHARE_OF_TTFT * first.p50:
        return None
    handshake = f" + TLS {tls:,.2f} ms" if phases.tls_ms is not None else ""
    beside = by_key("ttft" if stage.ttft_ms else "e2e").short
    return (
        f"{share:.0%} of requests opened a connection of their own (connect {tcp:,.2f} ms{handshake} "
        f"p50, beside a {beside} p50 of {first.p50:,.1f} ms, and not in it): the client sends "
        "Connection: close, or the server or a gateway closes connections early; a client that "
        "keeps them alive does not pay this per request"
    )


UNANSWERED_METRICS = (
    "requests asked for the server's own timing of each (include_metrics) and no answer carried "
    "it: start vLLM with --enable-per-request-metrics (vLLM 0.25 or later) for the client-minus-"
    "server table, or pass --server-timings off to stop asking"
)


def summarize_stage(
    view: StageView,
    limits: HealthLimits,
    checks: ChecksConfig,
    *,
    partial: bool = False,
    workload: WorkloadConfig | None = None,
    usd_per_hour: float | None = None,
    ignore_eos: bool = False,
    tokenize: str | None = None,
) -> Stage:
    """``tokenize``: what the workload's ``--tokenize`` came to at the start (``auto`` resolved);
    None: not known (yet)."""
    warnings: list[str] = []
    if partial:
        warnings.append("the run was interrupted during this stage: its window is shorter than planned")
    if not view.measured:
        warnings.append(
            "the warm-up never completed, so nothing was measured: run longer or lower --warmup-requests"
        )
    bound_by = sorted(p for p, snap in view.health.items() if is_client_bound(snap, limits))
    if bound_by:
        warnings.append(
            f"client-bound ({', '.join(bound_by)}): the load generator, not the "
            "server, limited these numbers; add workers or lower the load"
        )
    stage = stage_summary(
        view.stats,
        index=view.index,
        concurrency=view.concurrency,
        duration_s=view.window_s,
        client_health=view.health,
        client_bound_by=bound_by,
        warnings=warnings,
        window=view.window,
        goodput=bool(checks.slo),
        rate=view.rate,
        lateness_s=view.lateness_s,
        partial=partial,
    )
    if checks.slo:
        results = evaluate(checks.slo, stage, view.stats.hist)
        slo = tuple(SloOutcome(rule=r.rule.text, observed=r.observed, met=r.passed) for r in results)
        stage = replace(stage, slo=slo)
    if usd_per_hour is not None:
        stage = replace(stage, cost=stage_cost(stage, usd_per_hour))
    if workload is not None and workload.tenants:
        stage = replace(stage, tenants=tenants_summary(stage, workload.tenants))
    if workload is not None:
        warning = cache_warning(stage.prompt_cache_hit_rate, workload, "usage")
        asked = workload.tokenize
        lengths = length_warnings(stage, ignore_eos, tokenize or asked, asked)
        stage = replace(stage, warnings=(*stage.warnings, *([warning] if warning else []), *lengths))
    if (connections := connection_warning(stage)) is not None:
        stage = replace(stage, warnings=(*stage.warnings, connections))
    return stage


def _run_info(
    config: RunConfig,
    run_id: str,
    started_at: float,
    model: str | None,
    *,
    workers: int,
    tokenize: str | None,
) -> RunInfo:
    """What the run was: its target, options and what reproduces it (records and verdict apart)."""
    return RunInfo(
        id=run_id,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started_at)),
        target=redact_url(config.host),
        model=model,
        scenario=config.scenario,
        options=config.public_dict(),
        records=(),
        reproducibility={
            **reproducibility(config.workload.seed, workers=workers),
            "salt": config.workload.salt,
            # what prompt lengths were counted in: rerun with --tokenize set to it
            "tokenize": tokenize or config.workload.tokenize,
        },
        stopped=None,
    )


def build_summary(
    config: RunConfig,
    *,
    run_id: str,
    started_at: float,
    model: str | None,
    views: list[StageView],
    records: Sequence[Mapping[str, JSON]],
    complete: bool,
    workers: int = 1,
    lost_workers: Sequence[LostWorker] = (),
    clocks: Sequence[WorkerClock] = (),
    warnings: Sequence[str] = (),
    stopped: Stopped | None = None,
    saturation: Saturation | None = None,
    tokenize: str | None = None,
) -> Summary:
    """``stopped``: why the run ended early (``verdict.py``), None when it ran as planned; an
    interrupt names the stage it cut short. ``saturation``: where
    ``--until-saturated`` ended the sweep (a sweep that ends so ran as planned).
    ``tokenize``: what ``--tokenize`` came to (``auto``: ``server`` or ``off``), recorded in
    ``run.reproducibility``; None before the run started (the option as given). A run refused
    at its start has no stages: its first was announced, but no user of it ever ran."""
    limits = HealthLimits()
    cut = stopped.stage if isinstance(stopped, Interrupted) else None
    views = [] if isinstance(stopped, Refused) else views
    stages = [
        summarize_stage(
            view,
            limits,
            config.checks,
            partial=view.index == cut,
            workload=config.workload,
            usd_per_hour=config.cost.per_hour_usd,
            ignore_eos=config.request.ignore_eos,
            tokenize=tokenize,
        )
        for view in views
    ]
    if isinstance(stopped, FailedFast):
        stopped = msgspec.structs.replace(stopped, message=redact_text(stopped.message))
    elif isinstance(stopped, Refused):
        stopped = msgspec.structs.replace(stopped, line=redact_text(stopped.line))
    run = replace(
        _run_info(config, run_id, started_at, model, workers=workers, tokenize=tokenize),
        records=tuple(records),
        stopped=stopped,
        lost_workers=tuple(lost_workers),
        clocks=tuple(clocks),
    )
    sides = [view.stats.server_side for view in views]
    if any(side.asked for side in sides) and not any(side.metrics_requests for side in sides):
        warnings = (*warnings, UNANSWERED_METRICS)
    return run_summary(
        run=run,
        stages=stages,
        complete=complete and stopped is None,
        warnings=warnings,
        stopped_at=saturation,
    )
