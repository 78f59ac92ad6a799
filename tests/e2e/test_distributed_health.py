"""``client-bound`` against ground truth: ``bench/client_bound.py --smoke`` runs a fixed, modest
stream count clean (the client at SCHED_FIFO, nothing else on its core) and under heavy CPU
contention (4 busy-loop burners pinned to the client's core), and measures each run's timing
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

from llmload.health import HealthLimits
from tests.support.fleet import REPO

pytestmark = [
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
    assert done.returncode == 0, "a verdict was WRONG, or the bench failed"
    clean, contended = orjson.loads(out.read_bytes())["rows"]
    bound = HealthLimits().loop_lag_p99_ms
    assert clean["level"] == "rt" and contended["burners"] == 4
    assert contended["error_p99_ms"] >= 2 * bound, contended
    assert contended["client_bound"], contended
    if clean["error_p99_ms"] > bound / 2:
        # Between half the bound and twice it either verdict is right (the bench's rule above
        # held); the baseline just was not clean. On this 2-core machine its p99 has ranged
        # 0.7-5 ms at SCHED_FIFO, the parent revision's too: say so rather than fail.
        pytest.skip(
            f"the clean baseline was not clean here: error p99 {clean['error_p99_ms']} ms "
            f"> {bound / 2} ms (machine noise at SCHED_FIFO); contended run flagged correctly"
        )
    assert not clean["client_bound"], clean
