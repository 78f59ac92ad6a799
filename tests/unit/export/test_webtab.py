"""The web UI's LLM tabs: what Locust's page is told to draw, and the rows that fill it."""

from __future__ import annotations

from llmload.export.webtab import Live, extended_stats, live_charts, template_args
from tests.support.summaries import stage

LATENCY = {
    "count": 40,
    "mean": 21.0,
    "min": 10.0,
    "p50": 20.0,
    "p90": 30.0,
    "p95": 31.0,
    "p99": 40.5,
    "p999": 49.0,
    "max": 50.0,
}


def live(*stages: dict[str, object], **gauges: float) -> Live:
    return Live(
        run_id="r1",
        phase="measure",
        gauges={"users": 4, "in_flight": 3, "workers": 0, **gauges},
        health={"local": {"loop_lag_p99_ms": 0.42, "cpu_percent": 31.0}},
        stages=tuple(stage(**s) for s in stages),
        timeline=(
            {"t_s": 0, "stage": 0, "phase": "warmup", "output_tok_per_s": 90, "in_flight": 4},
            {"t_s": 1, "stage": 0, "phase": "measure", "output_tok_per_s": 120, "in_flight": 4},
            {"t_s": 2, "stage": 0, "phase": "measure", "output_tok_per_s": 30, "in_flight": 3},
        ),
    )


def test_every_tab_has_a_table_and_every_row_only_its_columns() -> None:
    args = template_args()
    tabs = [t["key"] for t in args["extended_tabs"]]
    tables = {t["key"]: {c["key"] for c in t["structure"]} for t in args["extended_tables"]}
    assert tabs == list(tables) == ["llm", "llm-stages", "llm-timeline"]
    data = extended_stats(live({"index": 0, "ttft_ms": LATENCY}, {"index": 1, "concurrency": 8}))
    assert [d["key"] for d in data] == tabs
    for d in data:
        assert d["data"], d["key"]
        assert all(set(row) <= tables[d["key"]] for row in d["data"]), d["key"]
    assert all(link["href"].startswith("./llmload/") for link in args["extended_csv_files"])


def test_the_current_stage_rows_say_what_the_summary_would() -> None:
    view = live(
        {"index": 0},
        {
            "index": 1,
            "concurrency": 8,
            "output_tok_per_s": 812.345,
            "ttft_ms": LATENCY,
            "attempts": {"finished": 41, "failed": 1, "unfinished": 0, "errors": {"http_5xx": 1}},
            "client_bound": True,
            "client_bound_by": ["local"],
        },
    )
    rows = {r["what"]: r for r in extended_stats(view)[0]["data"]}
    assert rows["stage"]["value"] == "stage 1 (C=8) · measure"
    assert rows["output tok/s, stage window"]["value"] == "812.3"
    assert rows["output tok/s, last second"]["value"] == "120"  # the newest second is not whole
    ttft = rows["TTFT ms (n=40)"]
    assert (ttft["p50"], ttft["p90"], ttft["p99"]) == ("20.00", "30.00", "40.50")
    assert rows["errors: http_5xx"]["value"] == "1"
    assert rows["client-bound"]["value"].startswith("YES (local)")
    assert rows["client local: loop lag p99 ms · CPU %"]["value"] == "0.42 · 31"
    assert "workers" not in rows  # a local run


def test_stage_and_timeline_tables() -> None:
    stages, timeline = extended_stats(live({"index": 0, "ttft_ms": LATENCY}, {"index": 1, "concurrency": 8}))[
        1:
    ]
    assert [(r["index"], r["concurrency"], r["ttft_p50_ms"]) for r in stages["data"]] == [
        ("0", "4", "20.0"),
        ("1", "8", "-"),
    ]
    assert [r["t_s"] for r in timeline["data"]] == ["2", "1", "0"]  # newest first
    assert timeline["data"][0]["phase"] == "measure"


def test_before_the_first_swarm_the_tables_are_empty() -> None:
    assert [d["data"] for d in extended_stats(None)] == [[], [], []]


def test_the_live_charts_are_the_reports_from_the_stages_so_far() -> None:
    one = live({"index": 0, "concurrency": 4, "ttft_ms": LATENCY, "output_tok_per_s": 100.0})
    data = live_charts(one)
    names = [f["name"] for f in data["figures"]]
    assert names == ["dist_ttft", "timeline"]  # one stage: no curve of one point
    (ttft,) = data["figures"][0]["series"]
    assert ttft["x"] == [0.5, 0.9, 0.95, 0.99, 0.999] and ttft["y"] == [20.0, 30.0, 31.0, 40.5, 49.0]
    tok, in_flight = data["figures"][1]["series"]
    assert (
        tok["x"] == [0.0, 1.0, 2.0] and tok["y"] == [90.0, 120.0, 30.0] and in_flight["y"] == [4.0, 4.0, 3.0]
    )
    two = live(
        {"index": 0, "concurrency": 4, "ttft_ms": LATENCY, "output_tok_per_s": 100.0},
        {"index": 1, "concurrency": 8, "ttft_ms": LATENCY, "output_tok_per_s": 180.0},
    )
    names = [f["name"] for f in live_charts(two)["figures"]]
    assert names[0] == "dist_ttft" and {"timeline", "throughput"} <= set(names)
    assert live_charts(None) == {"figures": [], "requests": None}
