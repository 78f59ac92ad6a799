"""The exit status of a run, a sweep, a wait or a Kubernetes job: one table, used everywhere.

``verdict.judge`` decides a run's code from its summary. When several conditions hold at once,
the code is the first of them in ``PRECEDENCE``: an interrupted run is reported as interrupted
whatever it measured; a run that could not measure has no errors worth counting; a run that lost
a worker has numbers with a hole in them; a run whose requests failed has latencies not worth
judging; a missed objective matters more than a warning about the load generator. The reasons
list every condition that held, in that order, so nothing is hidden by the code.

``WAIT_TIMEOUT`` and ``LOG_STALLED`` end a wait for the server (``llmload wait``, and the wait
``llmload sweep|search`` do first); a run never ends with them. ``CONFIGS_FAILED`` ends only a
``llmload tune`` experiment.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERRORS_OVER_LIMIT = 1
    COULD_NOT_START = 2
    SLO_MISSED = 3
    CLIENT_BOUND = 4
    INCOMPLETE = 5
    WAIT_TIMEOUT = 6
    LOG_STALLED = 7
    CONFIGS_FAILED = 8
    # 128 + SIGINT, what a shell reports for a program ended by Ctrl+C: scripts that test for
    # it keep working, and an interrupted run can never pass for a finished one.
    INTERRUPTED = 130


MEANINGS: Mapping[ExitCode, str] = {
    ExitCode.OK: "the run completed; every check passed",
    ExitCode.ERRORS_OVER_LIMIT: "a stage's error rate exceeded `--max-error-rate` (default 1%)",
    ExitCode.COULD_NOT_START: "usage or configuration error; target unreachable, unauthorised or "
    "refusing every request (the run stops early); or nothing was "
    "measured",
    ExitCode.SLO_MISSED: "a stage missed an objective of `--slo`",
    ExitCode.CLIENT_BOUND: "a stage was client-bound (the load generator, not the server, set the "
    "numbers) and `--fail-on-client-bound` was given",
    ExitCode.INCOMPLETE: "a worker was lost mid-run: the summary names it and bounds what may be missing",
    ExitCode.WAIT_TIMEOUT: "waiting for the server: it was not ready within `--wait-timeout` (its log, "
    "if given, was still moving: slow loading)",
    ExitCode.LOG_STALLED: "waiting for the server: its `--log` stopped changing for `--log-stall` "
    "seconds: likely hung",
    ExitCode.CONFIGS_FAILED: "`llmload tune`: some configurations' servers failed to start, never became "
    "ready or died mid-sweep (each is recorded with its exit code and log tail); the others were measured",
    ExitCode.INTERRUPTED: "stopped by SIGINT or SIGTERM (Ctrl+C): what was measured so far is "
    "written, with `complete: false` and the cut stage marked partial",
}
PRECEDENCE = (
    ExitCode.INTERRUPTED,
    ExitCode.COULD_NOT_START,
    ExitCode.INCOMPLETE,
    ExitCode.ERRORS_OVER_LIMIT,
    ExitCode.SLO_MISSED,
    ExitCode.CLIENT_BOUND,
)


def markdown_table() -> str:
    """The documented table, for the README, docs/verdicts.md and ``--help`` texts."""
    lines = ["| exit code | name | meaning |", "|---|---|---|"]
    lines += [f"| {code.value} | `{code.name}` | {MEANINGS[code]} |" for code in ExitCode]
    order = " > ".join(f"{code.value} `{code.name}`" for code in PRECEDENCE)
    lines += ["", f"When several hold, the first in this order wins: {order}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
