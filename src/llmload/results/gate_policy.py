"""What ``llmload gate`` judges and how strictly (docs/history.md#the-gate): a policy, read from
a TOML table, or the default one. Pure: the command reads the file.

```toml
baseline = "rolling:5"   # the last 5 comparable runs, or a pinned baseline's name ("main")
repeats = 3              # repeats a level needs on each side before it is judged
alpha = 0.05             # the one-sided tests' level, after Holm's correction over the cells
levels = [1, 32]         # the levels judged (default: every level the run measured)

[metrics.output_tok_per_s]
min_effect = 0.03        # smaller changes are never a regression, however significant
[metrics.ttft_p99_ms]
min_effect = 0.06
direction = "lower"      # which way is better; each metric has its own default
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from llmload.errors import ConfigError
from llmload.results.runrecord import METRICS, level_name

ROLLING = "rolling:"
_HIGHER_IS_BETTER = frozenset({"output_tok_per_s", "goodput_req_per_s"})
# error_rate is judged by each run's own verdict (--max-error-rate): a relative change of a rate
# that is usually zero means nothing
_GATEABLE = tuple(m for m in METRICS if m != "error_rate")
# A tail needs enough requests behind it: with n requests, the chance that none lies above the
# true q-quantile is q^n, and the estimate is a guess until that chance is small (1%). For a p99
# that is 459 requests per repeat, for a median 7. ITL's quantiles are over tokens, not requests.
_TAIL_MISS = 0.01
_REQUESTS_PER_TOKEN_METRIC = frozenset({"itl_p99_ms"})


class Direction(StrEnum):
    HIGHER = "higher"  # tok/s: a drop is worse
    LOWER = "lower"  # latencies: a rise is worse


@dataclass(frozen=True, slots=True)
class MetricRule:
    metric: str
    min_effect: float  # relative: 0.03 is 3% worse
    direction: Direction

    @property
    def min_requests(self) -> int:
        """Requests a repeat needs for this metric's quantile to be more than a guess."""
        if self.metric in _REQUESTS_PER_TOKEN_METRIC:
            return 1
        quantile = _quantile(self.metric)
        return 1 if quantile is None else math.ceil(math.log(_TAIL_MISS) / math.log(quantile))


@dataclass(frozen=True, slots=True)
class Baseline:
    """A pinned run by name, or the last ``rolling`` comparable runs."""

    pin: str | None = None
    rolling: int | None = None

    @classmethod
    def parse(cls, text: str, where: str) -> Baseline:
        text = text.strip()
        if not text.startswith(ROLLING):
            if not text:
                raise ConfigError(where, text, "give a pinned baseline's name or rolling:N")
            return cls(pin=text)
        try:
            count = int(text.removeprefix(ROLLING))
        except ValueError:
            count = 0
        if count < 1:
            raise ConfigError(where, text, "rolling:N takes the last N comparable runs: N of 1 or more")
        return cls(rolling=count)

    def describe(self) -> str:
        return f"pinned baseline {self.pin!r}" if self.pin else f"the last {self.rolling} comparable runs"


@dataclass(frozen=True, slots=True)
class GatePolicy:
    rules: tuple[MetricRule, ...]
    baseline: Baseline = Baseline(rolling=5)
    repeats: int = 3
    alpha: float = 0.05
    levels: tuple[str, ...] | None = None  # None: every level the run measured


def _direction(metric: str) -> Direction:
    return Direction.HIGHER if metric in _HIGHER_IS_BETTER else Direction.LOWER


def _quantile(metric: str) -> float | None:
    for part in metric.split("_"):
        if part.startswith("p") and part[1:].isdigit():
            return int(part[1:]) / 100
    return None


# Tok/s and the medians move little between repeats of one server; tails move more. The 3%
# limits sit under the 5% regressions a serving team asks about, so those are found, not
# straddled (docs/history.md gives the measured false-alarm rate and power).
DEFAULT_POLICY = GatePolicy(
    rules=tuple(
        MetricRule(metric, effect, _direction(metric))
        for metric, effect in (
            ("output_tok_per_s", 0.03),
            ("ttft_p50_ms", 0.05),
            ("ttft_p99_ms", 0.06),
            ("tpot_p50_ms", 0.03),
            ("e2e_p50_ms", 0.03),
        )
    )
)
_KEYS = frozenset({"baseline", "repeats", "alpha", "levels", "metrics"})
_RULE_KEYS = frozenset({"min_effect", "direction"})


def policy_of(data: Mapping[str, object], where: str) -> GatePolicy:
    """A policy from a parsed TOML document; every value checked, naming ``where`` (the file)."""
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(where, unknown[0], f"is not a gate setting: {', '.join(sorted(_KEYS))}")
    default = DEFAULT_POLICY
    baseline = data.get("baseline")
    repeats = data.get("repeats", default.repeats)
    alpha = data.get("alpha", default.alpha)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 2:
        raise ConfigError(f"{where}: repeats", repeats, "needs 2 or more: a test needs each side's spread")
    if not isinstance(alpha, int | float) or isinstance(alpha, bool) or not 0 < alpha < 0.5:
        raise ConfigError(f"{where}: alpha", alpha, "must be between 0 and 0.5 (0.05 is usual)")
    return GatePolicy(
        rules=_rules(data.get("metrics"), where) if "metrics" in data else default.rules,
        baseline=default.baseline
        if baseline is None
        else Baseline.parse(str(baseline), f"{where}: baseline"),
        repeats=repeats,
        alpha=float(alpha),
        levels=_levels(data.get("levels"), where),
    )


def _rules(table: object, where: str) -> tuple[MetricRule, ...]:
    if not isinstance(table, Mapping) or not table:
        raise ConfigError(f"{where}: metrics", table, "give a table per metric: [metrics.output_tok_per_s]")
    rules = []
    for metric, rule in table.items():
        if metric == "error_rate":
            raise ConfigError(
                f"{where}: metrics",
                metric,
                "is judged by each run's own verdict: give the runs --max-error-rate",
            )
        if metric not in _GATEABLE:
            raise ConfigError(f"{where}: metrics", metric, f"is not a gated metric: {', '.join(_GATEABLE)}")
        if not isinstance(rule, Mapping) or set(rule) - _RULE_KEYS:
            raise ConfigError(f"{where}: metrics.{metric}", rule, "takes min_effect and direction")
        effect = rule.get("min_effect")
        if not isinstance(effect, int | float) or isinstance(effect, bool) or not 0 < effect < 1:
            raise ConfigError(
                f"{where}: metrics.{metric}.min_effect", effect, "a share between 0 and 1: 0.03"
            )
        try:
            direction = Direction(rule.get("direction", _direction(metric)))
        except ValueError:
            raise ConfigError(
                f"{where}: metrics.{metric}.direction", rule.get("direction"), "higher or lower"
            ) from None
        rules.append(MetricRule(metric, float(effect), direction))
    return tuple(rules)


def _levels(given: object, where: str) -> tuple[str, ...] | None:
    if given is None:
        return None
    if not isinstance(given, list) or not given:
        raise ConfigError(f"{where}: levels", given, "a list of levels: [1, 32] (users) or ['2.5/s']")
    levels = []
    for level in given:
        if isinstance(level, int) and not isinstance(level, bool) and level > 0:
            levels.append(level_name(level, None))
        elif isinstance(level, str) and level.endswith("/s"):
            try:
                levels.append(level_name(None, float(level.removesuffix("/s"))))
            except ValueError:
                raise ConfigError(f"{where}: levels", level, "a rate is written 2.5/s") from None
        else:
            raise ConfigError(f"{where}: levels", level, "users as a number (32), a rate as '2.5/s'")
    return tuple(levels)
