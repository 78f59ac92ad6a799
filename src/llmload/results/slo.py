"""Service-level objectives read against a stage of the summary: pass/fail and the exit code.

The rules and their parsing are ``llmload.metrics.slo``; this is the reading that needs the
summary's ``Stage``, kept here so that the statistics never import the summary built from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llmload.metrics.histogram import LogHistogram
from llmload.metrics.slo import NS_PER_MS, STORED_STATS, SloResult, SloRule, quantile_of
from llmload.results.summary_stage import Stage


def observe(
    rule: SloRule, stage: Stage, histograms: Mapping[str, LogHistogram] | None = None
) -> float | None:
    """The stage's value of the rule's statistic, or None when the stage did not measure it."""
    if rule.metric is None:
        value = getattr(stage, rule.key, None)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    assert rule.stat is not None  # a latency rule always has one (set by the parser)
    summary = stage.latency(rule.metric)
    if summary is not None and rule.stat in STORED_STATS:
        return float(summary.quantile(rule.stat))
    hist = histograms.get(rule.metric) if histograms is not None else None
    q = quantile_of(rule.stat)
    if hist is None or hist.count == 0 or q is None:
        return None
    value_ns = hist.quantile(q)
    return None if value_ns is None else value_ns / NS_PER_MS


def evaluate(
    rules: Sequence[SloRule], stage: Stage, histograms: Mapping[str, LogHistogram] | None = None
) -> list[SloResult]:
    """Every rule against one stage of the summary (``histograms``: that stage's, in ns)."""
    results = []
    for rule in rules:
        observed = observe(rule, stage, histograms)
        results.append(SloResult(rule, observed, observed is not None and rule.holds(observed)))
    return results
