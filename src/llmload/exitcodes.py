"""The exit status of a run, a sweep or a Kubernetes job: one table, used everywhere.

When several conditions hold at once, the exit code is the first of them in ``PRECEDENCE``
(could not start > incomplete > errors over the limit > SLO missed > client-bound): a run that could not
measure has no errors worth counting; a run whose requests failed has latencies not worth
judging; a missed objective matters more than a warning about the load generator. The reasons
list every condition that held, in that order, so nothing is hidden by the code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

from llmload.metrics.slo import SloRule, evaluate


class ExitCode(IntEnum):
    OK = 0
    ERRORS_OVER_LIMIT = 1
    COULD_NOT_START = 2
    SLO_MISSED = 3
    CLIENT_BOUND = 4
    INCOMPLETE = 5


MEANINGS: Mapping[ExitCode, str] = {
    ExitCode.OK: "the run completed; every check passed",
    ExitCode.ERRORS_OVER_LIMIT: "a stage's error rate exceeded `--max-error-rate`",
    ExitCode.COULD_NOT_START: "usage or configuration error, target unreachable or never ready, "
                              "or nothing was measured",
    ExitCode.SLO_MISSED: "a stage missed an objective of `--slo`",
    ExitCode.CLIENT_BOUND: "a stage was client-bound (the load generator, not the server, set the "
                           "numbers) and `--fail-on-client-bound` was given",
    ExitCode.INCOMPLETE: "a worker was lost mid-run: the summary names it and bounds what may be "
                         "missing",
}
PRECEDENCE = (ExitCode.COULD_NOT_START, ExitCode.INCOMPLETE, ExitCode.ERRORS_OVER_LIMIT,
              ExitCode.SLO_MISSED, ExitCode.CLIENT_BOUND)


def _name(stage: Mapping[str, Any]) -> str:
    level = stage.get("concurrency")
    return f"stage {stage.get('index', '?')}" + ("" if level is None else f" (C={level})")


def _attempted(stage: Mapping[str, Any]) -> int:
    req = stage.get("requests") or {}
    return int(req.get("ok", 0)) + int(req.get("failed", 0)) + int(req.get("unfinished", 0))


def _error_reasons(stages: Sequence[Mapping[str, Any]], limit: float | None) -> list[str]:
    if limit is None:
        return []
    reasons = []
    for stage in stages:
        rate = stage.get("error_rate")
        if rate is None or rate <= limit:
            continue
        kinds = ", ".join(f"{kind} {n}" for kind, n in (stage.get("errors") or {}).items())
        reasons.append(f"{_name(stage)}: error rate {rate:.2%} > limit {limit:.2%}"
                       + (f" ({kinds})" if kinds else ""))
    return reasons


def _slo_reasons(stages: Sequence[Mapping[str, Any]], rules: Sequence[SloRule]) -> list[str]:
    reasons = []
    for stage in stages:
        misses = [r.describe() for r in evaluate(rules, stage) if not r.passed]
        if misses:
            reasons.append(f"{_name(stage)}: SLO missed: {'; '.join(misses)}")
    return reasons


def _client_bound_reasons(stages: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"{_name(s)}: client-bound, the numbers measure the load generator" for s in stages
            if s.get("client_bound")]


def decide(summary: Mapping[str, Any] | None, rules: Sequence[SloRule], max_error_rate: float | None,
           fail_on_client_bound: bool) -> tuple[ExitCode, list[str]]:
    """The exit code of a finished run and every reason behind it (empty when OK).

    ``summary`` None means the run never got far enough to write one. Every stage must meet every
    objective; ``max_error_rate`` None disables the error check.
    """
    if summary is None:
        return ExitCode.COULD_NOT_START, ["the run wrote no summary: it never started measuring"]
    stages = list(summary.get("stages") or [])
    if not any(_attempted(s) for s in stages):
        return ExitCode.COULD_NOT_START, ["nothing was measured: no stage sent a request in its window"]
    found: dict[ExitCode, list[str]] = {
        ExitCode.ERRORS_OVER_LIMIT: _error_reasons(stages, max_error_rate),
        ExitCode.SLO_MISSED: _slo_reasons(stages, rules),
        ExitCode.CLIENT_BOUND: _client_bound_reasons(stages) if fail_on_client_bound else [],
        ExitCode.INCOMPLETE: [f"worker {w['worker']} was lost; up to "
                              f"{w['requests_missing_at_most']} requests may be missing"
                              for w in (summary.get("run") or {}).get("lost_workers") or []],
    }
    reasons = [reason for code in PRECEDENCE for reason in found.get(code, [])]
    code = next((code for code in PRECEDENCE if found.get(code)), ExitCode.OK)
    return code, reasons


def markdown_table() -> str:
    """The documented table, for docs and ``--help`` texts."""
    lines = ["| exit code | name | meaning |", "|---|---|---|"]
    lines += [f"| {code.value} | `{code.name}` | {MEANINGS[code]} |" for code in ExitCode]
    order = " > ".join(f"{code.value} `{code.name}`" for code in PRECEDENCE)
    lines += ["", f"When several hold, the first in this order wins: {order}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
