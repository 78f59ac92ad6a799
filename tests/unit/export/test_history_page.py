"""The trend page's data and shell (export/history_page.py), without a browser: what the charts
will draw is the trend's own numbers, and the page can make no request
(tests/e2e/test_history_page.py opens it in Chromium)."""

from __future__ import annotations

import re
from dataclasses import replace

import orjson

from llmload.export.charts import csp_hashes, scripts
from llmload.export.history_page import _script, history_page, page_metrics
from llmload.results.trend import oldest_first, trend
from tests.unit.export.test_history_render import records, stepped


def data_of(page: str) -> dict[str, object]:
    found = re.search(r'<script type="application/json" id="llmload-history">(.*?)</script>', page)
    assert found is not None
    data: dict[str, object] = orjson.loads(found.group(1))
    return data


def test_the_page_metrics_start_with_the_one_asked_for() -> None:
    assert page_metrics(None) == ("output_tok_per_s", "ttft_p99_ms", "tpot_p50_ms")
    assert page_metrics("tpot_p50_ms") == ("tpot_p50_ms", "output_tok_per_s", "ttft_p99_ms")
    assert page_metrics("peak_tok_per_s")[0] == "peak_tok_per_s"


def test_each_level_is_a_chart_of_the_trends_values_with_its_change_points() -> None:
    runs = stepped(12, 6)
    page = history_page(runs, page_metrics(None), None)
    data = data_of(page)
    sections = data["sections"]
    assert isinstance(sections, list)
    assert [s["title"] for s in sections] == ["out tok/s", "TTFT p99 ms", "TPOT p50 ms"]
    figures = sections[0]["figures"]
    assert [f["name"] for f in figures] == [f"output_tok_per_s-{lv}" for lv in ("1", "8", "32", "128")]
    one = trend(oldest_first(runs), "output_tok_per_s", "1")
    (series,) = figures[0]["series"]
    assert series["x"] == [float(n) for n in range(1, 13)]
    assert series["y"] == [p.value for p in one.points]
    assert figures[0]["band"] == {"low": [p.low for p in one.points], "high": [p.high for p in one.points]}
    assert figures[0]["runs"] == list(range(12))
    ((x, label),) = figures[0]["markers"]
    assert x == 6.5 and label.endswith("%: vllm 0.11.0 → 0.11.1")  # between run 6 and run 7
    assert all(not f["markers"] for f in figures[1:])  # the other levels did not change
    runs_data = data["runs"]
    assert isinstance(runs_data, list)
    assert [r["id"] for r in runs_data] == [f"run-{n:02d}" for n in range(12)]
    assert runs_data[0]["engine"] == "vllm 0.11.0" and runs_data[0]["commit"] == "abc1234"
    assert "<h2>Change points</h2>" in page and "first run after" in page


def test_the_page_is_self_contained_and_its_policy_runs_only_its_scripts() -> None:
    runs = [  # runs that measured no TTFT (not streamed) at all
        replace(r, stages=tuple(replace(s, ttft_p99_ms=None) for s in r.stages))
        for r in records(image="https://registry.example/vllm:0.9.2")
    ]
    page = history_page(runs, page_metrics("peak_tok_per_s"), "1")
    assert "http://" not in page and "https://" not in page  # the store's labels included
    policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src "
    assert policy + csp_hashes((*scripts(), _script())) in page
    sections = data_of(page)["sections"]
    assert isinstance(sections, list)
    assert [[f["name"] for f in s["figures"]] for s in sections] == [
        ["peak_tok_per_s-run"],
        ["output_tok_per_s-1"],  # --level 1: the stage metrics at that level only
        ["tpot_p50_ms-1"],  # and no chart of what no run measured
    ]
    assert "None found." in page  # three runs: too few for any change point
