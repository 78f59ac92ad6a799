"""A sweep's client-bound level under ``--processes auto``: run again with more processes where
the machine has cores for them, or said why not, in the console and in ``summary.json``.

The first test is the case of a 2-core machine with the simulator beside the client: a real-time
spinner holds the client's core 20 ms in about every 40 (the way bench/client_bound.py stalls
it), so the loop lags by about 20 ms, and no core is left for a second process. The second puts
the simulator on a host of its own (a network namespace), so the planner sees two free cores, and
overloads one process on purpose (a capacity figure far above the machine's): the level is run
again with two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fleet import REPO
from tests.support.netns import Lab, can_use_netns

# No bound on a time here: both tests need a level flagged client-bound, which a busy machine
# only makes more likely, and the rest is what llmload said of it.
pytestmark = [
    pytest.mark.e2e,
    # A SCHED_FIFO spinner and a 1,000-stream overload: the tests beside it would measure them.
    pytest.mark.alone,
    pytest.mark.skipif(can_use_netns() is not None, reason=str(can_use_netns())),  # root: chrt, netns
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs: the client's and the rest"),
]

SPIN = """
import random, time
while True:
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        pass
    time.sleep(random.uniform(0.01, 0.03))
"""
SIM_ARGS = ["--ttft-ms", "50", "--step-ms", "20"]


def sweep(
    *args: str, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "llmload.cli", "sweep", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **(env or {})},
    )


def summary(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_a_client_bound_level_with_no_core_to_spare_is_said_with_its_figures(tmp_path: Path) -> None:
    cpu = max(os.sched_getaffinity(0))
    spinner = subprocess.Popen(["chrt", "-f", "2", "taskset", "-c", str(cpu), sys.executable, "-c", SPIN])
    try:
        done = sweep(
            "--sim", "vllm", *(f"--sim-arg={a}" for a in SIM_ARGS), "--levels", "64", "--stage-s", "4",
            "--results-dir", str(tmp_path), "--run-id", "hog",
            prefix=("taskset", "-c", str(cpu)),
        )  # fmt: skip
    finally:
        spinner.kill()
        spinner.wait()
    print(done.stderr[-1500:])
    assert done.returncode == 0, done.stderr[-3000:]
    result = summary(tmp_path / "hog" / "summary.json")
    bound = [s["concurrency"] for s in result["stages"] if s["client_bound"]]
    assert bound, "the stalled client was not flagged: the test's contention did not bite"
    (rerun,) = result["reruns"]
    assert rerun["levels"] == bound and rerun["processes_before"] == 1
    assert rerun["processes"] is None and rerun["run_id"] is None
    assert rerun["why_not"] == "no core is left for another process (1 usable, 1 in use)"
    assert "loop lag p99" in rerun["health"]
    line = next(line for line in done.stderr.splitlines() if "client-bound with 1 process" in line)
    assert rerun["why_not"] in line and "measured this client, not the server" in line
    assert not (tmp_path / "hog-rerun").exists()


SIM_IP = "10.201.0.1"


def test_a_client_bound_level_is_run_again_with_more_processes_where_cores_are_free(tmp_path: Path) -> None:
    with Lab() as lab:
        sim_ns, client_ns = lab.ns("sim"), lab.ns("client")
        lab.bridge(sim_ns, f"{SIM_IP}/24")
        lab.link(client_ns, "10.201.0.2/24", sim_ns)
        with lab.sim(sim_ns, SIM_IP, tmp_path / "sim.out", *SIM_ARGS) as url:
            # A capacity 25x what one process parses here: the plan sees one process enough
            # for 1,000 streams x 50 tok/s, and that process is overloaded.
            done = sweep(
                "--host", url, "--levels", "1000", "--stage-s", "8", "--max-tokens", "64",
                "--results-dir", str(tmp_path), "--run-id", "over",
                prefix=tuple(lab.exec(client_ns)), env={"LLMLOAD_CAPACITY": "1000000"},
            )  # fmt: skip
    print(done.stdout[-1500:])
    assert done.returncode == 0, done.stderr[-3000:]
    first = summary(tmp_path / "over" / "summary.json")
    assert [s["client_bound"] for s in first["stages"]] == [True], first["stages"][0]["client_health"]
    (rerun,) = first["reruns"]
    assert rerun["levels"] == [1000] and rerun["processes_before"] == 1
    assert rerun["processes"] == 2 and rerun["run_id"] == "over-rerun" and rerun["why_not"] is None
    again = summary(tmp_path / "over-rerun" / "summary.json")
    assert [s["concurrency"] for s in again["stages"]] == [1000]
    assert len(again["stages"][0]["client_health"]) == 2  # two worker processes measured it
    assert rerun["client_bound_after"] == again["stages"][0]["client_bound"]
    assert "running it again with 2 processes as over-rerun" in done.stdout
