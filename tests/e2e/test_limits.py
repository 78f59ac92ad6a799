"""Limits checked before start (core/limits.py): real ``locust`` processes started under a low
open-file limit against the embedded simulator. A plan its hard limit cannot carry is refused in
one line, with the refusal's exit code, before any request; one whose soft limit is low while
the hard limit allows it runs, and says it raised the limit. Plain runs, ``--processes``, a
worker of a distributed run, and ``llmload sweep``'s largest level."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from llmload.sim.process import SimProcess, start_sim
from tests.support.fleet import LocustFleet, own_master_port
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
USERS = 200
REFUSAL = "llmload: this machine's limits cannot carry the plan: "
RAISED = "llmload: raised the open-file limit (ulimit -n) from 64 to "
SIM = ["--ttft-ms", "20", "--step-ms", "5"]


def nofile(soft: int, hard: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def locust(
    sim: SimProcess, results: Path, *args: str, limit: Callable[[], None], timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "locust", "-f", str(REPO / "locustfiles/chat.py"), "--headless",
        "-u", str(USERS), "-r", str(USERS), "-t", "8s", "--host", sim.url,
        "--results-dir", str(results), "--run-id", "run", "--only-summary", "--loglevel", "WARNING",
        "--tokenize", "off", "--max-tokens", "8", *args, *own_master_port(args),
    ]  # fmt: skip
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=timeout_s, check=False, preexec_fn=limit
    )


def refusal_of(output: str) -> str:
    """The one refusal line; Locust's own warning about the limit may stand beside it."""
    assert "Traceback" not in output, output[-3000:]
    lines = [line for line in output.splitlines() if REFUSAL in line]
    assert len(lines) == 1, output[-3000:]
    return lines[0]


def test_a_plain_run_over_the_hard_limit_is_refused_in_one_line_before_any_request(tmp_path: Path) -> None:
    with start_sim(SIM) as sim:
        done = locust(sim, tmp_path, limit=nofile(64, 64))
        served = sim.requests()
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    line = refusal_of(done.stderr)
    assert line.startswith(REFUSAL), line
    assert f"{USERS} connections (one per stream) + " in line and "over the hard limit of 64" in line
    assert "ulimit -Hn" in line and "--processes" in line
    assert served == []
    assert not (tmp_path / "run" / "summary.json").exists()


def test_a_soft_limit_under_the_plan_is_raised_where_the_hard_limit_allows_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    with start_sim(SIM) as sim:
        # Locust raises the soft limit to 10,000 itself where the hard limit allows that much:
        # a hard limit under it leaves the raise to llmload's check.
        done = locust(sim, tmp_path, limit=nofile(64, 4096))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr and REFUSAL not in done.stderr
    raised = [line for line in done.stderr.splitlines() if line.startswith(RAISED)]
    assert len(raised) == 1, done.stderr[-2000:]
    assert "(hard limit 4,096)" in raised[0] and f"{USERS} connections (one per stream)" in raised[0]
    (stage,) = read_checked(tmp_path / "run" / "summary.json")["stages"]
    assert stage["requests"]["ok"] > 0 and stage["requests"]["failed"] == 0


def test_a_processes_run_is_refused_by_its_master_for_the_workers_it_forked(tmp_path: Path) -> None:
    with start_sim(SIM) as sim:
        started = time.monotonic()
        done = locust(sim, tmp_path, "--processes", "2", limit=nofile(64, 64), timeout_s=50)
        took_s = time.monotonic() - started
        served = sim.requests()
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    line = refusal_of(done.stderr)
    assert f"each of 2 processes: {USERS // 2} connections" in line, line
    assert served == []
    # not timing: forked workers left behind would wait Locust's 60 s for the master's heartbeat
    assert took_s < 45 and "heartbeat" not in done.stderr, done.stderr[-2000:]


def test_a_worker_over_its_limit_refuses_its_share_and_the_master_says_so(tmp_path: Path) -> None:
    with start_sim(SIM) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        fleet.start_master("--max-tokens", "8", workers=1, users=USERS, run_time="5s")
        worker = fleet.start_worker(prefix=["prlimit", "--nofile=64:64", "--"])
        assert fleet.wait_master(90) == 2
        assert worker.wait(30) == 2
        served = sim.requests()
    master_out = fleet.master.output() if fleet.master else ""
    assert "Traceback" not in master_out and "Traceback" not in worker.output()
    said = [line for line in master_out.splitlines() if "llmload: worker-0: this machine's limits" in line]
    assert len(said) == 1, master_out[-3000:]
    assert f"{USERS} connections" in said[0] and "over the hard limit of 64" in said[0]
    assert served == []


def test_a_sweep_of_a_server_is_refused_before_it_waits_for_the_server(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable, "-m", "llmload.cli", "sweep", "--host", "http://127.0.0.1:9", "--levels",
            f"1,{USERS}", "--processes", "2", "--wait-timeout", "60", "--results-dir", str(tmp_path),
        ],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False, preexec_fn=nofile(64, 64),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "not ready" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("llmload sweep: this machine's limits cannot carry the plan: "), line
    assert f"each of 2 processes: {USERS // 2} connections" in line
    assert time.monotonic() - started < 50  # not timing: the wait alone would take 60 s


def test_a_sweep_is_checked_at_its_largest_level(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "llmload.cli", "sweep", "--sim", "vllm", "--levels", f"1,{USERS}",
            "--stage-s", "2", "--processes", "0", "--results-dir", str(tmp_path), "--run-id", "sweep",
        ],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False, preexec_fn=nofile(64, 64),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    line = refusal_of(done.stderr)
    assert f"{USERS} connections (one per stream)" in line, line
    assert not (tmp_path / "sweep" / "summary.json").exists()
