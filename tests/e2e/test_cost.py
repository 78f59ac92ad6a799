"""Cost per token and the GPUs' energy per token, against the simulator's own accounting, and
the report's Pareto and cost sections as Chromium draws them.

The simulator (``--dcgm``) serves DCGM exporter gauges of a GPU that draws IDLE_W idle and
BUSY_W while a decode step runs; its truth knows every step's duration, so the energy over a
stage's window is known exactly, independently of the scrapes llmload made.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmload.export.series import pareto_points
from llmload.export.tables import stage_rows
from llmload.results.summary import read
from llmload.sim.gpu import BUSY_W, IDLE_W
from llmload.sim.model import stage_output_tok_per_s
from llmload.sim.process import start_sim
from llmload.sim.profiles import get_profile
from tests.e2e.conftest import REPO
from tests.support.chromium import CHROMIUM, FLAGS, MISSING, keep
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class CostRun:
    path: Path
    summary: dict[str, Any]
    output: str
    returncode: int
    truth: list[tuple[int, int]]  # per stage: its window and the simulated GPU's busy time in it (ns)


def _busy_ns_since(url: str, since_ns: int) -> int:
    steps = httpx.get(f"{url}/sim/stats", params={"since_ns": since_ns}, timeout=10).json()["step_duration"]
    return int(steps["count"] * steps["mean_ns"])


@pytest.fixture(scope="module")
def cost_run(tmp_path_factory: pytest.TempPathFactory) -> CostRun:
    results = tmp_path_factory.mktemp("cost")
    with start_sim(["--profile", "vllm", "--dcgm"]) as sim:
        command = [
            sys.executable,
            "-m",
            "llmload.cli",
            "sweep",
            "--host",
            sim.url,
            "--results-dir",
            str(results),
        ]
        command += ["--run-id", "cost", "--levels", "1,4,8", "--stage-s", "3", "--max-tokens", "64"]
        # vLLM's profile: TPOT 12.1 ms at C=1, 13.8 at C=4, 16.1 at C=8
        command += ["--slo", "tpot_p50_ms<=15", "--gpu-hour-cost", "2.5", "--gpus", "2"]
        command += ["--gpu-metrics", f"{sim.url}/metrics"]
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
        summary = read_checked(results / "cost" / "summary.json")
        truth = []
        for stage in summary["stages"]:
            t0, t1 = stage["window_ns"]
            truth.append((t1 - t0, _busy_ns_since(sim.url, t0) - _busy_ns_since(sim.url, t1)))
    return CostRun(results / "cost", summary, proc.stdout + proc.stderr, proc.returncode, truth)


def test_cost_per_token_cheapest_under_slo_and_energy_per_token(cost_run: CostRun) -> None:
    summary, output = cost_run.summary, cost_run.output
    assert summary["exit"]["name"] == "slo_missed", output[-3000:]
    assert cost_run.returncode == summary["exit"]["code"]
    for stage, (window_ns, busy_ns) in zip(summary["stages"], cost_run.truth, strict=True):
        cost = stage["cost"]
        assert cost["usd_per_hour"] == 5.0  # 2.5 USD per GPU-hour, 2 GPUs
        out_rate, in_rate = stage["output_tok_per_s"], stage["input_tok_per_s"]
        assert cost["usd_per_m_output_tokens"] == pytest.approx(5.0 / 3600 / out_rate * 1e6, rel=1e-5)
        assert cost["usd_per_m_input_tokens"] == pytest.approx(5.0 / 3600 / in_rate * 1e6, rel=1e-5)
        gpu = stage["gpu"]
        assert gpu["gpus"] == 1
        energy = IDLE_W * window_ns / 1e9 + (BUSY_W - IDLE_W) * busy_ns / 1e9
        # the scrapes bound the stage within a poll of its window
        assert gpu["energy_j"] == pytest.approx(energy, rel=0.03), (stage["concurrency"], gpu, energy)
        per_token = gpu["energy_j"] / stage["window_output_tokens"]
        assert gpu["joules_per_output_token"] == pytest.approx(per_token, rel=1e-4)
        assert 0 < gpu["util_pct"]["mean"] <= 100
        assert IDLE_W <= gpu["power_w"]["mean"] <= BUSY_W
    # more streams share the simulated GPU's power among more tokens
    per_token = [s["gpu"]["joules_per_output_token"] for s in summary["stages"]]
    assert per_token == sorted(per_token, reverse=True)
    cheapest = summary["headline"]["cheapest"]
    assert (cheapest["concurrency"], cheapest["under_slo"]) == (4, True)  # C=8 is cheaper but misses the SLO
    assert "/M output tokens" in output and "cheapest: stage 1 (C=4)" in output


@pytest.mark.timing  # the simulator's speeds, which a busy machine slows
def test_the_pareto_points_are_the_simulators_speeds(cost_run: CostRun) -> None:
    # One engine's sweep is its own frontier: each level up gives the fleet more and each
    # user less. The points are the model's: per-user speed is one decode step per token.
    params = get_profile("vllm").params()
    points = pareto_points({"run": stage_rows(read(cost_run.summary))})
    assert [p.concurrency for p in points] == [1, 4, 8]
    for p in points:
        model = stage_output_tok_per_s(params, p.concurrency)
        assert p.per_user_tok_per_s == pytest.approx(model / p.concurrency, rel=0.03), p
        assert p.output_tok_per_s == pytest.approx(model, rel=0.05), p
        assert p.on_frontier and p.on_ttft_frontier


@pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING)
def test_the_reports_pareto_and_cost_sections_render_in_chromium(cost_run: CostRun, tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is a test dependency")
    report = cost_run.path / "report.html"
    shots = {name: tmp_path / f"report-{name}.png" for name in ("pareto", "cost")}
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(FLAGS[1:]))
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(report.as_uri())
        for name, heading in (("pareto", "Pareto frontier"), ("cost", "Cost and energy")):
            section = page.locator("h2", has_text=heading)
            assert section.count() == 1, heading
            table = section.locator("xpath=following-sibling::div[@class='scroll'][1]")
            top, bottom = section.bounding_box(), table.bounding_box()
            assert top is not None and bottom is not None
            clip = {
                "x": 0,
                "y": top["y"],
                "width": 1280,
                "height": bottom["y"] + bottom["height"] - top["y"] + 8,
            }
            page.screenshot(path=str(shots[name]), clip=clip, full_page=True)
        cheapest = page.locator("tr.good td").first.inner_text()
        page.wait_for_function("window.llmloadCharts && window.llmloadCharts.drawn")
        plots = page.evaluate(
            "['pareto', 'pareto_ttft'].map(name => window.llmloadCharts.drawn[name])"
            ".map(u => u !== undefined && u.series.length > 1)"
        )
        page.locator("#chart-pareto").screenshot(path=str(tmp_path / "report-pareto-plot.png"))
        browser.close()
    assert cheapest == "1"  # the cheapest stage's row is the highlighted one
    assert plots == [True, True]
    for shot in (*shots.values(), tmp_path / "report-pareto-plot.png"):
        keep(shot)
