"""``client-bound`` against ground truth: ``bench/client_bound.py --smoke`` runs a fixed, modest
stream count clean (the client at SCHED_FIFO, nothing else on its core) and stalled (a
SCHED_FIFO spinner holds the client's core 20 ms of every 40 ms), and measures each run's timing
error against the simulator. The flag must follow the error, not the stream count.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from llmload.core.health import HealthLimits
from tests.support.fleet import REPO
from tests.support.noise import UNJUDGED

pytestmark = [
    pytest.mark.timing,
    pytest.mark.e2e,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="the clean baseline runs the client at SCHED_FIFO (chrt), which needs root; CI runs as root",
    ),
    pytest.mark.skipif(
        len(os.sched_getaffinity(0)) < 2 or not shutil.which("taskset"),
        reason="needs two CPUs and taskset: one for the simulator, one contended",
    ),
]


def test_client_bound_follows_the_timing_error_under_cpu_contention(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, "bench/client_bound.py", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    print(done.stdout[-3000:], done.stderr[-3000:])
    # The rows are written whatever the verdicts; a bench that failed outright writes none.
    assert out.exists(), "the bench failed"
    clean, contended = orjson.loads(out.read_bytes())["rows"]
    bound = HealthLimits().loop_lag_p99_ms
    assert clean["level"] == "rt" and contended["stall_ms"] == 20
    # A token that arrives during a stall waits out the rest of it, so the p99 is near 20 ms
    # on any kernel; 4 equal-nice burners gave 15-30 ms on one VM and 4.8 ms on another.
    assert contended["error_p99_ms"] >= 2 * bound, contended
    assert contended["client_bound"], contended
    if clean["error_p99_ms"] > bound / 2:
        # The baseline was not clean, so its verdict proves nothing either way. On this 2-core
        # VM its error p99 at SCHED_FIFO has read 0.7-5 ms, and once 18.8 ms with the client's
        # loop lag p99 at 3.4 ms: the whole machine paused (one pause delays every stream's
        # token at once, but only one loop-lag sample), which is not the client being slow.
        pytest.skip(
            f"{UNJUDGED}the clean baseline was not clean: error p99 {clean['error_p99_ms']} ms "
            f"> {bound / 2} ms, simulator lateness p99 {clean['sim_lateness_p99_ms']} ms, "
            f"loop lag p99 {clean['loop_lag_p99_ms']} ms (machine noise at SCHED_FIFO); "
            "contended run flagged correctly"
        )
    assert not clean["client_bound"], clean
    assert done.returncode == 0, "a verdict was WRONG"
