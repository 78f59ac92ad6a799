"""``--requests N``: a stage measures N requests however long they take, and a plain run then
ends by itself: its size is the same on an idle machine and on a loaded one, where a timed
window may hold none. Real `locust` and `llmload sweep` processes against the simulator.

Each run is given a time limit (-t, --stage-s) longer than the subprocess's own timeout: a run
that did not end by itself would fail the test by timing out, so none of these asserts a time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from llmload.results.exitcodes import ExitCode
from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO, RunLocust
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e

SIM = ["--ttft-ms", "20", "--step-ms", "10"]
CHAT = ("--max-tokens", "16")
NEVER_S = 900  # a limit the runs must not reach: each subprocess times out first


def test_a_plain_run_measures_its_requests_then_ends(run_locust: RunLocust) -> None:
    with start_sim(SIM) as sim:
        run = run_locust(sim.url, *CHAT, "--requests", "10", users=3, run_time=f"{NEVER_S}s")
    requests = run.summary["stages"][0]["requests"]
    # One process closes the window when the eleventh would start: exactly ten, all finished
    # in the drain (a plain run's drain is otherwise 0 s: its end is Locust's).
    assert (requests["ok"], requests["failed"], requests["unfinished"]) == (10, 0, 0), requests
    measured = [r for r in run.records if r["phase"] == "measure"]
    assert len(measured) == 10 and all(r["outcome"] == "ok" for r in measured)
    assert run.summary["complete"] and "10 measured requests" in run.output


def test_a_fleet_measures_at_least_its_requests(run_locust: RunLocust) -> None:
    with start_sim(SIM) as sim:
        run = run_locust(
            sim.url, *CHAT, "--requests", "10", "--processes", "2", users=4, run_time=f"{NEVER_S}s"
        )
    requests = run.summary["stages"][0]["requests"]
    # The master sums the workers' counts as they report them: the window may hold more.
    assert requests["ok"] >= 10 and (requests["failed"], requests["unfinished"]) == (0, 0), requests


def test_each_sweep_stage_measures_its_requests(tmp_path: Path) -> None:
    with start_sim(SIM) as sim:
        command = [
            *(sys.executable, "-m", "llmload.cli", "sweep", "--host", sim.url, "--no-wait"),
            *("--levels", "1,4", "--stage-s", str(NEVER_S), "--requests", "6", *CHAT),
            *("--results-dir", str(tmp_path), "--run-id", "count", "--", "--tokenize", "off"),
        ]
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = read_checked(tmp_path / "count" / "summary.json")
    # Locust ticks a sweep once a second; the session asks for the tick itself when a request
    # past the count would start, so each stage holds exactly its six.
    assert [(s["concurrency"], s["requests"]["ok"]) for s in summary["stages"]] == [(1, 6), (4, 6)]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--requests", "0"), "llmload: --requests=0: must be 1 or more"),
        (("--requests", "-3"), "llmload: --requests=-3: must be 1 or more"),
    ],
)
def test_a_count_below_one_stops_before_the_start(
    run_locust: RunLocust, args: tuple[str, ...], line: str
) -> None:
    run = run_locust("http://127.0.0.1:9", *args, users=1, expect_code=None)
    assert run.returncode == ExitCode.COULD_NOT_START, run.output[-2000:]
    assert "Traceback" not in run.output and line in run.output, run.output[-2000:]
