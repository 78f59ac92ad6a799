"""The ledger: every judgement of a run, kept with the run's output and summed at its end.

The plugin appends one JSON line per judgement to ``judgements-<worker>.jsonl`` in
``$LLMLOAD_TIMING_DIR`` (``scripts/test.sh`` points it at the run's output folder), tagged with
the tier and the attempt. Read back, a test's outcome is that of its last attempt: an unjudged
test is run once more at the end of its tier, and what it says then stands.

    python -m tests.support.timing.ledger unjudged DIR TIER   # node ids to run once more
    python -m tests.support.timing.ledger summary DIR         # the totals; exit 1 past the limit
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.support.timing.judge import Judgement, Outcome, worst_outcome

DIR_ENV = "LLMLOAD_TIMING_DIR"
TIER_ENV = "LLMLOAD_TIMING_TIER"
ATTEMPT_ENV = "LLMLOAD_TIMING_ATTEMPT"
# A run in which more than this share of the tests that judge timing stayed unjudged fails: a
# machine that can never judge a bound is not a green CI.
UNJUDGED_LIMIT = 0.2


def append(directory: Path, judgement: Judgement) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    line = {
        **judgement.as_json(),
        "tier": os.environ.get(TIER_ENV, ""),
        "attempt": int(os.environ.get(ATTEMPT_ENV, "1")),
    }
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"judgements-{worker}.jsonl").open("ab") as f:
        f.write(orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE))


def read(directory: Path) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for path in sorted(directory.glob("judgements-*.jsonl")):
        lines.extend(orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip())
    return lines


@dataclass(frozen=True, slots=True)
class Totals:
    judgements: int
    passed: list[str]
    unjudged: list[str]
    failed: list[str]
    rerun: int  # tests judged a second time

    @property
    def tests(self) -> int:
        return len(self.passed) + len(self.unjudged) + len(self.failed)

    @property
    def over_limit(self) -> bool:
        return self.tests > 0 and len(self.unjudged) > UNJUDGED_LIMIT * self.tests

    def line(self) -> str:
        return (
            f"timing: {self.tests} tests, {self.judgements} judgements: {len(self.passed)} passed, "
            f"{len(self.unjudged)} unjudged, {len(self.failed)} failed ({self.rerun} run again)"
        )


def totals(lines: list[dict[str, Any]], tier: str | None = None) -> Totals:
    """Each test's outcome at its last attempt."""
    by_test: dict[str, dict[int, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    for line in lines:
        if tier is None or line.get("tier") == tier:
            by_test[line["test"]][int(line.get("attempt", 1))].append(Outcome(line["outcome"]))
    result: dict[Outcome, list[str]] = defaultdict(list)
    judgements = 0
    for test, attempts in sorted(by_test.items()):
        last = attempts[max(attempts)]
        judgements += len(last)
        outcome = worst_outcome(last)
        if outcome is not None:
            result[outcome].append(test)
    rerun = sum(1 for attempts in by_test.values() if len(attempts) > 1)
    return Totals(judgements, result[Outcome.PASS], result[Outcome.UNJUDGED], result[Outcome.FAIL], rerun)


def main(argv: list[str]) -> int:
    command, directory = argv[0], Path(argv[1])
    lines = read(directory) if directory.exists() else []
    if command == "unjudged":
        for test in totals(lines, argv[2]).unjudged:
            print(test)
        return 0
    result = totals(lines)
    (directory / "timing.json").write_bytes(
        orjson.dumps(
            {
                "tests": result.tests,
                "judgements": result.judgements,
                "passed": result.passed,
                "unjudged": result.unjudged,
                "failed": result.failed,
                "unjudged_limit": UNJUDGED_LIMIT,
            },
            option=orjson.OPT_INDENT_2,
        )
    )
    print(result.line())
    for test in result.unjudged:
        print(f"  unjudged: {test}")
    if result.over_limit:
        print(
            f"timing: {len(result.unjudged)} of {result.tests} tests unjudged, over the limit of "
            f"{UNJUDGED_LIMIT:.0%}: this machine was too noisy to judge the suite's timing"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
