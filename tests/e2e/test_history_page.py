"""`llmload history KEY --html PATH` read in headless Chromium: three short runs of the simulator
recorded in a store of their own, their trend page opened from ``file://`` with the network
closed (tests/support/chromium.py). No request beyond the page itself, no console error, every
chart drawn, each point the value its run's summary.json holds, and a hovered point names its
run's fingerprint. Not a timing claim: the numbers are compared with the summaries, not with a
bound. The screenshot is kept as an artifact."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO, RunLocust
from tests.support.chromium import CHROMIUM, MISSING, keep
from tests.support.report_browser import browser, legend, open_page

pytest.importorskip("playwright.sync_api", reason="playwright is a test dependency")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING)]

USERS = 2
# the page's metrics, by their chart names' stem, and where summary.json has each
METRICS = {
    "output_tok_per_s": lambda stage: stage["output_tok_per_s"],
    "ttft_p99_ms": lambda stage: stage["ttft_ms"]["p99"],
    "tpot_p50_ms": lambda stage: stage["tpot_ms"]["p50"],
}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as b:
        yield b


def test_the_trend_page_draws_each_run_as_its_summary_says(
    run_locust: RunLocust, chromium: Any, tmp_path: Path
) -> None:
    store = tmp_path / "history.sqlite"
    with start_sim(["--profile", "vllm"]) as sim:
        runs = [
            run_locust(
                sim.url,
                *("--max-tokens", "16", "--history", str(store), "--label", f"image=sim:{n}"),
                users=USERS,
                run_time="10s",  # a loaded machine's first look at the server took the whole of 3 s, then 6
            )
            for n in (1, 2, 3)
        ]
    summaries = [run.summary for run in runs]
    page_path = tmp_path / "trend.html"
    proc = subprocess.run(
        [sys.executable, "-m", "llmload.cli", "history", "--history", str(store), "--html", str(page_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"the trend page is {page_path}" in proc.stdout

    page = open_page(chromium, page_path)
    assert page.errors == []
    assert page.requests == [page_path.as_uri()]  # the page itself, and nothing else
    charts = page.charts()
    assert charts == [f"{metric}-{USERS}" for metric in METRICS]
    for name in charts:
        assert page.inked(name) > 2_000, name
    for metric, of in METRICS.items():
        drawn = page.page.evaluate(
            "(name) => { const u = window.llmloadCharts.drawn[name]; return [u.data[0], u.data[1]]; }",
            f"{metric}-{USERS}",
        )
        assert drawn == [[1, 2, 3], [of(s["stages"][0]) for s in summaries]], metric

    last = summaries[-1]
    hovered = page.hover(f"output_tok_per_s-{USERS}", 3, 1)
    assert hovered == legend(last["stages"][0]["output_tok_per_s"])
    info = page.page.locator(f'[data-run-info="output_tok_per_s-{USERS}"]').text_content()
    assert info is not None
    assert info.startswith(f"run 3 · {last['run']['id']} · ")
    assert "vllm" in info and "image=sim:3" in info
    commit = last["run"]["reproducibility"].get("git_commit")
    assert commit is None or f"commit {commit[:12]}" in info
    shot = tmp_path / "history-page.png"
    page.page.screenshot(path=str(shot), full_page=True)
    keep(shot)
