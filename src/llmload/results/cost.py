"""Throughput as money: a stage's $ per million tokens at the deployment's price per hour.

A deployment that costs ``P`` dollars an hour and writes ``R`` output tokens a second spends
``P / 3600 / R`` dollars per token, so ``P / (3.6e-3 * R)`` per million. The same hour is
charged to the input tokens for their figure: a price sheet quotes both that way, and
splitting one bill between prefill and decode would need the engine's own accounting.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.results.summary import Cheapest
from llmload.results.summary_stage import Stage, StageCost

_SECONDS_PER_HOUR = 3600.0


def per_million(usd_per_hour: float, tok_per_s: float | None) -> float | None:
    if not tok_per_s or tok_per_s <= 0:
        return None  # nothing produced: no price per token, rather than an infinite one
    return round(usd_per_hour / _SECONDS_PER_HOUR / tok_per_s * 1e6, 6)


def stage_cost(stage: Stage, usd_per_hour: float | None) -> StageCost | None:
    if usd_per_hour is None:
        return None
    return StageCost(
        usd_per_hour=usd_per_hour,
        usd_per_m_output_tokens=per_million(usd_per_hour, stage.output_tok_per_s),
        usd_per_m_input_tokens=per_million(usd_per_hour, stage.input_tok_per_s),
    )


def cheapest(stages: Sequence[Stage]) -> Cheapest | None:
    """The stage with the lowest $ per million output tokens that met every SLO (all stages
    when the run had none); None without a price or when no stage met the SLOs."""
    judged = any(s.slo is not None for s in stages)
    priced = [
        (s.cost.usd_per_m_output_tokens, s)
        for s in stages
        if s.cost is not None
        and s.cost.usd_per_m_output_tokens is not None
        and (not judged or (s.slo is not None and all(o.met for o in s.slo)))
    ]
    if not priced:
        return None
    usd, best = min(priced, key=lambda p: (p[0], p[1].index))
    return Cheapest(
        stage=best.index,
        concurrency=best.concurrency,
        rate_req_per_s=best.rate_req_per_s,
        usd_per_m_output_tokens=usd,
        under_slo=judged,
    )
