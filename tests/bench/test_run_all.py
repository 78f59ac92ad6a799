"""CI smoke: every benchmark runs end to end in its smoke mode, and the side-by-side table prints."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# It waits on the benchmarks' subprocesses and judges none of their numbers (bench/ does, side by
# side in one run): it runs with the tests that wait.
pytestmark = [pytest.mark.e2e]


@pytest.mark.long
@pytest.mark.timeout(320)
def test_run_all_smoke() -> None:
    command = [sys.executable, "bench/run_all.py", "--smoke", "--skip", "client_bound,exporter_overhead"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=310, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    for name in ("capacity", "accuracy", "memory", "master_scale", "fleet_netns"):
        assert f"## {name}" in out, out[-3000:]
    assert "Locust FastHttpUser lines" in out
    assert "instructions per report" in out  # the master's cost, counted under callgrind
    if importlib.util.find_spec("aiohttp") is not None:  # the bench extra
        assert "vLLM-style (aiohttp)" in out
