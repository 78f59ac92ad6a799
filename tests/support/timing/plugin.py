"""The judge as pytest sees it: the ``judge`` fixture, the canary behind it, and the rules
(``tests/conftest.py`` wires these into its hooks).

- A test marked ``timing`` must take the ``judge`` fixture (checked at collection), and a test
  that takes it must judge something (checked at its teardown).
- A test whose judgements left one unjudged, and none failed, ends as skipped with
  ``UNJUDGED`` and the numbers (``tests/conftest.py`` lets CI keep such a skip).
- The canary is the one ``scripts/test.sh`` started for the whole run (``$LLMLOAD_CANARY_DIR``),
  or, when pytest runs alone, one this process starts the first time a test needs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.timing import ledger
from tests.support.timing.judge import UNJUDGED, Judge, Judgement, Outcome
from tests.support.timing.noise import CanaryLog

CANARY_ENV = "LLMLOAD_CANARY_DIR"

_module_start = pytest.StashKey[dict[str, int]]()
_judge_of = pytest.StashKey[Judge]()
CALL_PASSED = pytest.StashKey[bool]()  # set by tests/conftest.py's report hook


def note_setup(item: pytest.Item) -> None:
    """The noise of a test's window starts with its module: a module's fixture (a run its tests
    all read) is set up for its first test."""
    starts = item.config.stash.setdefault(_module_start, {})
    starts.setdefault(_module_name(item), time.perf_counter_ns())


def _module_name(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    return module.__name__ if module is not None else ""


def check_collected(items: list[pytest.Item]) -> None:
    unjudged = [
        item.nodeid
        for item in items
        if item.get_closest_marker("timing") and "judge" not in getattr(item, "fixturenames", ())
    ]
    if unjudged:
        raise pytest.UsageError(
            "tests marked timing must state their bounds through the `judge` fixture "
            "(tests/support/timing): " + ", ".join(unjudged)
        )


def start_canary(directory: Path) -> subprocess.Popen[bytes]:
    """The canary process, writing into ``directory``; returns once it samples."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.timing.canary", str(directory)],
        cwd=Path(__file__).resolve().parents[3],
    )
    give_up = time.monotonic() + 10
    while not (directory / "ready").exists():
        if proc.poll() is not None or time.monotonic() > give_up:
            proc.kill()
            raise RuntimeError(f"the canary did not start (exit {proc.poll()})")
        time.sleep(0.01)
    return proc


@pytest.fixture(scope="session")
def canary_log() -> Iterator[CanaryLog]:
    shared = os.environ.get(CANARY_ENV)
    if shared:
        yield CanaryLog(Path(shared))
        return
    with tempfile.TemporaryDirectory(prefix="llmload-canary-") as tmp:
        proc = start_canary(Path(tmp))
        try:
            yield CanaryLog(Path(tmp))
        finally:
            proc.terminate()
            proc.wait(5)


@pytest.fixture
def judge(request: pytest.FixtureRequest, canary_log: CanaryLog) -> Iterator[Judge]:
    node = request.node
    directory = os.environ.get(ledger.DIR_ENV)

    def record(judgement: Judgement) -> None:
        if directory:
            ledger.append(Path(directory), judgement)

    since = request.config.stash.get(_module_start, {}).get(_module_name(node), time.perf_counter_ns())
    # xdist adds "@group" to the ids of grouped tests: the ledger names the test as pytest takes it
    # pytest-xdist's workers run side by side: a failure under CPU pressure is judged again alone
    beside_others = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1
    the_judge = Judge(node.nodeid.split("@")[0], canary_log, since, record, beside_others=beside_others)
    node.stash[_judge_of] = the_judge
    yield the_judge
    if not the_judge.judgements and node.stash.get(CALL_PASSED, False):
        pytest.fail("this test takes the timing judge but judged nothing", pytrace=False)


def unjudged_reason(item: pytest.Item) -> str | None:
    """Why a test that passed its assertions still cannot count as passed, if it cannot."""
    the_judge = item.stash.get(_judge_of, None)
    if the_judge is None or not the_judge.unjudged:
        return None
    if any(j.outcome is Outcome.FAIL for j in the_judge.judgements):
        return None
    return UNJUDGED + "; ".join(j.explain() for j in the_judge.unjudged)
