"""Fairness between the tenants of a ``--tenants`` mix: each tenant's goodput share against its
weight (Jain's index over the ratios), and the worst tenant's p99 TTFT against the best's.

Each tenant's numbers are its named requests' (``tenant:<name>`` in ``stage.by_name``), so they
add up to the stage's. Goodput is the rate of a tenant's requests that met its own SLO (the
run's ``--slo`` where it has none; every ok request where there is none at all): a tenant whose
requests all succeed but miss their latency objective has no goodput, and the index says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.config.tenants import Tenant
from llmload.results.summary_stage import Stage, TenantShare, TenantsSummary


def tenants_summary(stage: Stage, mix: Sequence[Tenant]) -> TenantsSummary | None:
    if not mix:
        return None
    weights = sum(t.weight for t in mix)
    goodput: dict[str, float] = {}
    ttft_p99: dict[str, float] = {}
    ok: dict[str, int] = {}
    for t in mix:
        named = stage.by_name.get(t.request_name)
        goodput[t.name] = (named.goodput_req_per_s or 0.0) if named else 0.0
        ok[t.name] = named.requests.ok if named else 0
        if named is not None and named.ttft_ms is not None:
            ttft_p99[t.name] = named.ttft_ms.p99
    total = sum(goodput.values())
    shares: dict[str, TenantShare] = {}
    ratios: list[float] = []
    for t in mix:
        weight_share = t.weight / weights
        share = goodput[t.name] / total if total else None
        ratio = None if share is None else share / weight_share
        if ratio is not None:
            ratios.append(ratio)
        shares[t.name] = TenantShare(
            weight_share=round(weight_share, 6),
            ok=ok[t.name],
            goodput_req_per_s=round(goodput[t.name], 3),
            goodput_share=None if share is None else round(share, 6),
            share_over_weight=None if ratio is None else round(ratio, 6),
            ttft_p99_ms=ttft_p99.get(t.name),
        )
    worst = max(ttft_p99, key=ttft_p99.__getitem__, default=None)
    best = min(ttft_p99, key=ttft_p99.__getitem__, default=None)
    return TenantsSummary(
        tenants=shares,
        jain_index=_jain(ratios),
        worst_ttft_p99_tenant=worst,
        best_ttft_p99_tenant=best,
        ttft_p99_worst_over_best=(
            round(ttft_p99[worst] / ttft_p99[best], 4) if worst and best and ttft_p99[best] > 0 else None
        ),
    )


def _jain(values: list[float]) -> float | None:
    """(Σx)² / (n·Σx²): 1 when all are equal, 1/n when one has everything."""
    squares = sum(x * x for x in values)
    if not values or squares == 0:
        return None
    return round(sum(values) ** 2 / (len(values) * squares), 6)
