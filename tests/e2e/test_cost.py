"""Cost per token and the GPUs' energy per token, against the simulator's own accounting.

The simulator (``--dcgm``) serves DCGM exporter gauges of a GPU that draws IDLE_W idle and
BUSY_W while a decode step runs; its truth knows every step's duration, so the energy over a
stage's window is known exactly, independently of the scrapes llmload made.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from llmload.sim.gpu import BUSY_W, IDLE_W
from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e


def _busy_ns_since(url: str, since_ns: int) -> int:
    steps = httpx.get(f"{url}/sim/stats", params={"since_ns": since_ns}, timeout=10).json()["step_duration"]
    return int(steps["count"] * steps["mean_ns"])


def test_cost_per_token_cheapest_under_slo_and_energy_per_token(tmp_path: Path) -> None:
    with start_sim(["--profile", "vllm", "--dcgm"]) as sim:
        command = [
            sys.executable,
            "-m",
            "llmload.cli",
            "sweep",
            "--host",
            sim.url,
            "--results-dir",
            str(tmp_path),
        ]
        command += ["--run-id", "cost", "--levels", "1,4,8", "--stage-s", "3", "--max-tokens", "64"]
        # vLLM's profile: TPOT 12.1 ms at C=1, 13.8 at C=4, 16.1 at C=8
        command += ["--slo", "tpot_p50_ms<=15", "--gpu-hour-cost", "2.5", "--gpus", "2"]
        command += ["--gpu-metrics", f"{sim.url}/metrics"]
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
        summary = read_checked(tmp_path / "cost" / "summary.json")
        truth = []
        for stage in summary["stages"]:
            t0, t1 = stage["window_ns"]
            truth.append((t1 - t0, _busy_ns_since(sim.url, t0) - _busy_ns_since(sim.url, t1)))
    output = proc.stdout + proc.stderr
    assert summary["exit"]["name"] == "slo_missed" and proc.returncode == summary["exit"]["code"], output[
        -3000:
    ]
    for stage, (window_ns, busy_ns) in zip(summary["stages"], truth, strict=True):
        cost = stage["cost"]
        assert cost["usd_per_hour"] == 5.0  # 2.5 USD per GPU-hour, 2 GPUs
        assert cost["usd_per_m_output_tokens"] == pytest.approx(
            5.0 / 3600 / stage["output_tok_per_s"] * 1e6, rel=1e-5
        )
        assert cost["usd_per_m_input_tokens"] == pytest.approx(
            5.0 / 3600 / stage["input_tok_per_s"] * 1e6, rel=1e-5
        )
        gpu = stage["gpu"]
        assert gpu["gpus"] == 1
        energy = IDLE_W * window_ns / 1e9 + (BUSY_W - IDLE_W) * busy_ns / 1e9
        # the scrapes bound the stage within a poll of its window
        assert gpu["energy_j"] == pytest.approx(energy, rel=0.03), (stage["concurrency"], gpu, energy)
        assert gpu["joules_per_output_token"] == pytest.approx(
            gpu["energy_j"] / stage["window_output_tokens"], rel=1e-4
        )
        assert 0 < gpu["util_pct"]["mean"] <= 100
        assert IDLE_W <= gpu["power_w"]["mean"] <= BUSY_W
    # more streams keep the simulated GPU busier and share its power among more tokens
    per_token = [s["gpu"]["joules_per_output_token"] for s in summary["stages"]]
    assert per_token == sorted(per_token, reverse=True)
    cheapest = summary["headline"]["cheapest"]
    assert (cheapest["concurrency"], cheapest["under_slo"]) == (4, True)  # C=8 is cheaper but misses the SLO
    assert "/M output tokens" in output and "cheapest: stage 1 (C=4)" in output
    report = (tmp_path / "cost" / "report.html").read_text()
    assert "Cost and energy" in report
