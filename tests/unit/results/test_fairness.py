"""Fairness between tenants: goodput share against weight (Jain's index), worst p99 TTFT over best."""

from __future__ import annotations

from dataclasses import replace

import pytest

from llmload.config.tenants import Tenant
from llmload.metrics.aggregate import StageStats
from llmload.results.fairness import tenants_summary
from llmload.results.from_stats import stage_summary
from llmload.results.summary_stage import Latency, NamedStage, Requests, Stage


def _named(ok: int, goodput: float, ttft_p99: float) -> NamedStage:
    ttft = Latency(
        count=ok, mean=ttft_p99, min=1.0, max=ttft_p99, p50=1.0, p90=1.0, p95=1.0, p99=ttft_p99, p999=ttft_p99
    )
    return NamedStage(
        requests=Requests(ok=ok, failed=0, unfinished=0, warmup=0, drain=0),
        errors={},
        output_tokens=0,
        output_tok_per_s=None,
        input_tok_per_s=None,
        request_per_s=None,
        ttft_ms=ttft,
        ttfot_ms=None,
        itl_ms=None,
        tpot_ms=None,
        e2e_ms=None,
        goodput_req_per_s=goodput,
    )


MIX = (Tenant("a", 3.0), Tenant("b", 1.0))


@pytest.fixture
def any_stage() -> Stage:
    return stage_summary(
        StageStats(),
        index=0,
        concurrency=4,
        duration_s=10.0,
        client_health={},
        client_bound_by=(),
        warnings=(),
    )


def _stage(a: NamedStage, b: NamedStage, stage: Stage) -> Stage:
    return replace(stage, by_name={"tenant:a": a, "tenant:b": b})


def test_shares_as_weighted_are_fair_and_a_starved_tenant_is_not(any_stage: Stage) -> None:
    fair = tenants_summary(_stage(_named(30, 3.0, 40.0), _named(10, 1.0, 80.0), any_stage), MIX)
    assert fair is not None and fair.jain_index == 1.0
    assert fair.tenants["a"].share_over_weight == fair.tenants["b"].share_over_weight == 1.0
    assert (fair.worst_ttft_p99_tenant, fair.best_ttft_p99_tenant, fair.ttft_p99_worst_over_best) == (
        "b",
        "a",
        2.0,
    )
    # b's requests all succeed but none meets its SLO: it got nothing of the goodput
    starved = tenants_summary(_stage(_named(30, 3.0, 40.0), _named(10, 0.0, 900.0), any_stage), MIX)
    assert starved is not None and starved.tenants["b"].share_over_weight == 0.0
    assert starved.jain_index == 0.5  # 1/n: one tenant has it all
    assert tenants_summary(any_stage, ()) is None
