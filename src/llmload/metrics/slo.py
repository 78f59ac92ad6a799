"""Service-level objectives: ``--slo 'ttft_p99_ms<=200,tpot_p50_ms<=50,output_tok_per_s>=1000'``.

A rule names either a statistic of a stage's latency object (``<metric>_<stat>_ms``, where
``stat`` is ``pNN``, ``p999``, ``mean``, ``min`` or ``max``) or a numeric stage field
(``output_tok_per_s``, ``error_rate``, ...), an operator (``<=``, ``<``, ``>=``, ``>``) and a
threshold. Two readings of the same rules:

- per stage (``llmload.results.slo.evaluate``): the stage's statistic against the threshold, for pass/fail and
  the exit code. Percentiles the summary does not store (``p75``) are read from the stage's
  histograms when given.
- per request (:func:`request_meets`), for goodput: only the request-level metrics (the
  catalog's ``goodput`` ones: TTFT, TTFOT, TPOT, E2E) apply, and a percentile rule becomes a
  threshold on that one request's value: ``ttft_p99_ms<=200`` means "this request's TTFT
  <= 200 ms". That is how vLLM's ``--goodput`` and DistServe define goodput: the rate of requests
  that each met every latency objective. Stage-only rules (throughput, error rate) do not apply
  to one request.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from llmload.core.record import RequestRecord
from llmload.errors import ConfigError
from llmload.metrics import derive
from llmload.metrics.catalog import GOODPUT, LATENCY_KEYS, latency_stat

OPTION = "--slo"
# Numeric stage fields a rule may name besides the ones with a rate suffix (see _is_stage_field).
STAGE_FIELDS = (
    "output_tok_per_s",
    "input_tok_per_s",
    "total_tok_per_s",
    "request_per_s",
    "goodput_req_per_s",
    "error_rate",
    "duration_s",
    "output_tokens",
    "window_output_tokens",
)
_OPS: Mapping[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}
# Two-character operators first, so "<=" is never read as "<" followed by "=200".
_CLAUSE = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*(<=|>=|<|>)\s*([^\s<>=]+)\s*$")
STORED_STATS = ("p50", "p90", "p95", "p99", "p999", "mean", "min", "max")
NS_PER_MS = 1e6


@dataclass(frozen=True, slots=True)
class SloRule:
    key: str  # as written: "ttft_p99_ms", "output_tok_per_s"
    op: str
    threshold: float
    metric: str | None = None  # "ttft" for a latency rule, None for a stage field
    stat: str | None = None  # "p99", "mean", ...

    @property
    def text(self) -> str:
        return f"{self.key}{self.op}{self.threshold:g}"

    def holds(self, observed: float) -> bool:
        return _OPS[self.op](observed, self.threshold)


@dataclass(frozen=True, slots=True)
class SloResult:
    rule: SloRule
    observed: float | None  # None: the stage did not measure it, which counts as a miss
    passed: bool

    def describe(self) -> str:
        seen = "not measured" if self.observed is None else f"{self.observed:g}"
        return f"{self.rule.text}: {seen} ({'pass' if self.passed else 'MISS'})"


def quantile_of(stat: str) -> float | None:
    """``p99`` → 0.99, ``p999`` → 0.999, ``p50`` → 0.5; None for mean/min/max."""
    if not stat.startswith("p"):
        return None
    digits = stat[1:]
    return int(digits) / float(10 ** len(digits))


def _parse_clause(clause: str) -> SloRule:
    m = _CLAUSE.match(clause)
    if m is None:
        raise ConfigError(
            OPTION, clause, "expected METRIC OP NUMBER with OP one of <=, <, >=, >, e.g. ttft_p99_ms<=200"
        )
    key, op, number = m.groups()
    try:
        threshold = float(number)
    except ValueError:
        raise ConfigError(OPTION, clause, f"{number!r} is not a number") from None
    if not math.isfinite(threshold):
        raise ConfigError(OPTION, clause, "the threshold must be a finite number")
    lat = latency_stat(key)
    if lat is not None:
        metric, stat = lat
        if metric not in LATENCY_KEYS:
            raise ConfigError(
                OPTION, clause, f"unknown latency metric {metric!r}; one of {', '.join(LATENCY_KEYS)}"
            )
        return SloRule(key, op, threshold, metric, stat)
    if not _is_stage_field(key):
        raise ConfigError(
            OPTION,
            clause,
            f"unknown metric {key!r}: use <metric>_<pNN|mean|min|max>_ms "
            f"or a stage field such as {', '.join(STAGE_FIELDS[:5])}",
        )
    return SloRule(key, op, threshold)


def _is_stage_field(key: str) -> bool:
    # Stage fields carry their unit in their name (DESIGN rule 6), so new rates are accepted
    # without editing this list, while typos such as "output_tok_per_sec" are still caught.
    return key in STAGE_FIELDS or key.endswith(("_per_s", "_rate"))


def parse_slo(text: str | None) -> tuple[SloRule, ...]:
    """Parse the ``--slo`` value; an empty or absent value means no objectives."""
    if text is None or not text.strip():
        return ()
    rules = tuple(_parse_clause(clause) for clause in text.split(",") if clause.strip())
    if not rules:
        raise ConfigError(OPTION, text, "no objective given")
    return rules


def parse_max_error_rate(value: str | float | None) -> float | None:
    """``--max-error-rate`` as a fraction in [0, 1]; ``5%`` is accepted too."""
    if value is None:
        return None
    try:
        if isinstance(value, str) and value.strip().endswith("%"):
            rate = float(value.strip()[:-1]) / 100
        else:
            rate = float(value)
    except ValueError:
        raise ConfigError("--max-error-rate", value, "expected a fraction such as 0.01 or 1%") from None
    if not 0.0 <= rate <= 1.0:
        raise ConfigError("--max-error-rate", value, "must be between 0 and 1 (or 0% and 100%)")
    return rate


def request_ms(r: RequestRecord, m: derive.Measures) -> dict[str, float | None]:
    """One request's value, in ms, of each metric goodput judges per request (the catalog's)."""
    return {key: None if (ns := sample(r, m)) is None else ns / NS_PER_MS for key, sample in GOODPUT}


def request_meets(rules: Sequence[SloRule], values: Mapping[str, float | None]) -> bool:
    """Whether one successful request met every request-level rule (the goodput predicate).

    ``values``: the request's own, in ms, by metric (:func:`request_ms`); a caller that has the
    request's worst token gap may add it as ``"itl"``. Give only requests that succeeded: a
    failed request is never good. A metric the request did not define (TPOT of a one-token
    answer, TTFT of a non-streamed one) does not count against it, as vLLM's goodput treats a
    one-token TPOT as 0; any other rule is a stage-level objective (throughput, error rate,
    connect or queue time).
    """
    for rule in rules:
        value = values.get(rule.metric) if rule.metric is not None else None
        if value is not None and not rule.holds(value):
            return False
    return True
