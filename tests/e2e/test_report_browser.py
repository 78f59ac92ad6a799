"""report.html and llmload compare's page, read in headless Chromium as a user would.

Real runs against the simulator (one stage; a sweep with repeats; one where every request
failed) and a comparison of three runs: each page opens from ``file://`` with no console error
and no request beyond itself, every chart draws, a hovered point reads what summary.json says,
a drag zooms the time axis, a legend click hides its series and the requests table filters to
the failures. The screenshots are kept as artifacts (tests/support/chromium.py ``keep``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO, RunLocust
from tests.e2e.test_sweep import sweep
from tests.support.chromium import CHROMIUM, MISSING, keep
from tests.support.report_browser import Page, browser, legend, open_page

pytest.importorskip("playwright.sync_api", reason="playwright is a test dependency")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING)]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as b:
        yield b


def shown(value: float) -> str:
    """A number as the charts' legend writes it."""
    return legend(value)


def shown_of_rounded(value: float) -> set[str]:
    """What the legend may write for a quantile that summary.json rounded to ``value`` (four
    places): the chart draws the unrounded one, anywhere in the rounding's half-unit either side,
    and two places of that can differ from two places of ``value`` (8.29504 is 8.30, 8.295 8.29)."""
    return {shown(value - 0.00005), shown(value), shown(value + 0.00005)}


def opened(chromium: Any, path: Path) -> Page:
    page = open_page(chromium, path)
    assert page.errors == []
    assert page.requests == [path.as_uri()]  # the page itself, and nothing else
    for name in page.charts():
        assert page.inked(name) > 2_000, name
    return page


def screenshot(page: Page, path: Path) -> None:
    page.page.screenshot(path=str(path), full_page=True)
    keep(path)


def test_one_stage_run(run_locust: RunLocust, chromium: Any, tmp_path: Path) -> None:
    with start_sim(["--ttft-ms", "40", "--step-ms", "5"]) as sim:
        run = run_locust(sim.url, "--max-tokens", "24", "--ignore-eos", users=4, run_time="6s")
    summary = run.summary
    page = opened(chromium, run.results / "report.html")
    assert page.charts() == ["dist_ttft", "dist_itl", "dist_tpot", "dist_e2e", "timeline", "requests"]
    stage = summary["stages"][0]
    for metric in ("ttft", "itl", "tpot", "e2e"):
        assert page.hover(f"dist_{metric}", 0.5, 1) in shown_of_rounded(stage[f"{metric}_ms"]["p50"]), metric
        assert page.hover(f"dist_{metric}", 0.99, 1) in shown_of_rounded(stage[f"{metric}_ms"]["p99"]), metric
    before = page.x_range("timeline")
    page.drag("timeline", 0.2, 0.6)
    after = page.x_range("timeline")
    assert before[0] < after[0] < after[1] < before[1]
    page.wheel("timeline", -2)  # pans back towards the start, the zoomed span kept
    panned = page.x_range("timeline")
    assert panned[0] < after[0] and panned[1] - panned[0] == pytest.approx(after[1] - after[0])
    assert page.toggle("timeline", 2) is False  # in flight hidden
    before = page.x_range("requests")
    page.drag("requests", 0.3, 0.5)
    assert page.x_range("requests")[1] - page.x_range("requests")[0] < (before[1] - before[0]) / 2
    rows = page.table_rows()
    assert len(rows) == summary["run"]["records"][0]["records"]
    assert {r[4] for r in rows} == {"ok"}
    page.page.select_option('select[data-filter="outcome"]', "!ok")
    assert page.table_rows() == []
    page.page.select_option('select[data-filter="outcome"]', "")
    page.page.click('#requests-table th[data-key="e2e_ms"]')  # slowest first
    e2e = [float(r[7].replace(",", "")) for r in page.table_rows()]
    assert e2e == sorted(e2e, reverse=True)
    screenshot(page, tmp_path / "report-one-stage.png")


def test_sweep_with_repeats(chromium: Any, tmp_path: Path) -> None:
    code, summary, output = sweep(
        tmp_path,
        "s",
        "--sim",
        "vllm",
        "--levels",
        "1,4",
        "--repeat",
        "2",
        "--stage-s",
        "2",
        "--max-tokens",
        "16",
    )
    assert code == 0, output[-3000:]
    page = opened(chromium, tmp_path / "s" / "report.html")
    charts = page.charts()
    assert charts[:4] == ["dist_ttft", "dist_itl", "dist_tpot", "dist_e2e"]
    assert {"timeline", "throughput", "ttft", "pareto", "requests"} <= set(charts)  # not timing: chart names
    for level in summary["headline"]["levels"]:
        c = level["concurrency"]
        # the chart plots the mean of the level's repeats as summed here; the headline rounds
        # that mean to 3 places first, and a mean of x.xx5 then shows one cent apart
        repeats = [s["output_tok_per_s"] for s in summary["stages"] if s["concurrency"] == c]
        assert level["output_tok_per_s"] == round(sum(repeats) / len(repeats), 3)
        assert page.hover("throughput", c, 1) == shown(sum(repeats) / len(repeats)), c
    # the stage picker: one stage's curves in every distribution chart
    page.page.click('[data-stage="3"]')
    visible = page.page.evaluate(
        "() => window.llmloadCharts.drawn.dist_ttft.series.slice(1).map(s => s.show)"
    )
    assert visible == [False, False, False, True]
    assert page.hover("dist_ttft", 0.5, 4) in shown_of_rounded(summary["stages"][3]["ttft_ms"]["p50"])
    # and a click on a row of the stage table does the same for that stage
    page.page.locator("h2:text-is('Stages') ~ div.scroll tbody tr").first.click()
    visible = page.page.evaluate("() => window.llmloadCharts.drawn.dist_e2e.series.slice(1).map(s => s.show)")
    assert visible == [True, False, False, False]
    screenshot(page, tmp_path / "report-sweep.png")


def test_compare_of_three_runs(chromium: Any, tmp_path: Path) -> None:
    runs = [
        shutil.copytree(FIXTURES / name, tmp_path / name) for name in ("engine-a", "engine-b", "engine-c")
    ]
    out = tmp_path / "compare.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "llmload.cli",
            "compare",
            *map(str, runs),
            "--format",
            "html",
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = opened(chromium, out)
    assert page.charts() == ["compare_throughput", "compare_decode", "compare_pareto", "compare_pareto_ttft"]
    assert page.hover("compare_throughput", 128, 2) == shown(2216.0)  # engine-b at C=128
    assert page.toggle("compare_throughput", 1) is False
    screenshot(page, tmp_path / "compare-three.png")


def test_a_run_where_every_request_failed(run_locust: RunLocust, chromium: Any, tmp_path: Path) -> None:
    with start_sim(["--fault", "http_500", "--fault-rate", "1"]) as sim:
        run = run_locust(sim.url, "--drain-s", "1", users=2, run_time="4s", expect_code=None)
    assert run.returncode != 0
    page = opened(chromium, run.results / "report.html")
    assert page.page.locator("#verdict").inner_text().startswith("✗ Run failed")
    assert "requests" in page.charts() and not any(c.startswith("dist_") for c in page.charts())
    rows = page.table_rows()
    page.page.select_option('select[data-filter="outcome"]', "!ok")  # every failure
    assert (
        page.table_rows() == rows and {r[4] for r in rows} == {"http_5xx"} and {r[5] for r in rows} == {"500"}
    )
    page.page.select_option('select[data-filter="outcome"]', "http_5xx")
    assert page.table_rows() == rows
    screenshot(page, tmp_path / "report-all-failed.png")
