"""`llmload report`: stages.csv, the charts drawn from it, and the self-contained report.html."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload import cli
from llmload.errors import ResultsError
from llmload.export.plots import render
from llmload.export.report import write_report
from llmload.export.rundata import read_timeseries
from llmload.export.series import report_figures
from llmload.export.tables import STAGE_COLUMNS, read_stages_csv
from tests.support.pages import assert_self_contained, chart_data

PLOTS = {"throughput", "ttft", "itl", "tpot", "throughput_latency", "pareto", "pareto_ttft"}
DISTRIBUTIONS = {"dist_ttft", "dist_itl", "dist_tpot", "dist_e2e"}


def raw_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def num(text: str) -> float | None:
    return float(text) if text else None


def by_level(rows: list[dict[str, str]], column: str) -> dict[float, list[float]]:
    out: dict[float, list[float]] = {}
    for row in rows:
        out.setdefault(float(row["concurrency"]), [])
        if row[column]:
            out[float(row["concurrency"])].append(float(row[column]))
    return dict(sorted(out.items()))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((path / "summary.json").read_bytes())
    return data


def test_writes_every_file(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    assert write_report(run) == run / "report.html"
    assert not list(run.glob("*.png"))  # images only when asked
    assert (run / "stages.csv").is_file()
    write_report(run, png=True)
    charts = PLOTS | DISTRIBUTIONS | {"timeline"}
    assert {p.name for p in run.glob("*.png")} == {f"{name}.png" for name in charts}


def test_stages_csv_holds_the_summary_numbers(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    write_report(run)
    rows = raw_csv(run / "stages.csv")
    stages = load(run)["stages"]
    assert list(rows[0]) == list(STAGE_COLUMNS)
    assert len(rows) == len(stages) == 6
    for row, stage in zip(rows, stages, strict=True):
        assert int(row["index"]) == stage["index"] and int(row["concurrency"]) == stage["concurrency"]
        assert float(row["output_tok_per_s"]) == stage["output_tok_per_s"]
        assert float(row["window_s"]) == stage["duration_s"]
        assert int(row["requests_failed"]) == stage["requests"]["failed"]
        for metric in ("ttft", "itl", "tpot", "e2e"):
            for q in ("p50", "p90", "p99"):
                assert float(row[f"{metric}_{q}_ms"]) == stage[f"{metric}_ms"][q]
        assert float(row["decode_tok_per_s"]) == pytest.approx(1000 / stage["tpot_ms"]["p50"], abs=1e-3)
        assert row["client_bound"] == "false"
        assert row["goodput_req_per_s"] == ""  # no --slo: absent, never zero


def test_plotted_series_equal_stages_csv(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    write_report(run, png=True)
    rows = raw_csv(run / "stages.csv")
    figures = {
        f.name: f
        for f in report_figures(read_stages_csv(run / "stages.csv"), read_timeseries(run / "timeseries.csv"))
    }
    assert set(figures) == PLOTS | {"timeline"}

    def check_level_series(name: str, index: int, column: str) -> None:
        series = figures[name].series[index]
        expected = by_level(rows, column)
        assert series.x == tuple(expected)
        assert series.y == pytest.approx([sum(v) / len(v) for v in expected.values()])
        assert series.low == tuple(min(v) for v in expected.values())  # levels 1 and 128 repeat
        assert series.high == tuple(max(v) for v in expected.values())

    check_level_series("throughput", 0, "output_tok_per_s")
    for metric in ("ttft", "itl", "tpot"):
        check_level_series(metric, 0, f"{metric}_p50_ms")
        check_level_series(metric, 1, f"{metric}_p99_ms")
    (curve,) = figures["throughput_latency"].series
    assert list(zip(curve.x, curve.y, strict=True)) == [
        (float(r["output_tok_per_s"]), float(r["decode_tok_per_s"])) for r in rows
    ]
    assert curve.point_labels == ("C=1", "", "C=8", "C=32", "C=128", "")
    # Pareto: one point per level (repeats averaged), per-user speed against tok/s
    levels, frontier = figures["pareto"].series
    speed, tput = by_level(rows, "decode_tok_per_s"), by_level(rows, "output_tok_per_s")
    assert levels.x == pytest.approx([sum(v) / len(v) for v in speed.values()])
    assert levels.y == pytest.approx([sum(v) / len(v) for v in tput.values()])
    assert levels.point_labels == ("C=1", "C=8", "C=32", "C=128")
    assert frontier.dashed and set(frontier.y) <= set(levels.y)
    tok, in_flight = figures["timeline"].series
    ts = raw_csv(run / "timeseries.csv")
    assert tok.x == tuple(float(r["t_s"]) for r in ts)
    assert tok.y == tuple(num(r["output_tok_per_s"]) for r in ts)
    assert in_flight.y == tuple(num(r["in_flight"]) for r in ts)
    # the PNGs on disk are exactly these series drawn
    for name, spec in figures.items():
        assert (run / f"{name}.png").read_bytes() == render(spec), name


def test_report_html_is_self_contained_and_holds_every_chart(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    text = write_report(run).read_text(encoding="utf-8")
    assert_self_contained(text)
    data = chart_data(text)
    names = [f["name"] for f in data["figures"]]
    assert set(names) == PLOTS | DISTRIBUTIONS | {"timeline"}
    assert names[:4] == ["dist_ttft", "dist_itl", "dist_tpot", "dist_e2e"]
    assert data["requests"] is None  # the fixture's requests.jsonl is empty
    assert "http&#58;//gpu-a:8000" in text  # the target is shown, but is no reference


def test_distributions_pass_through_the_summarys_quantiles(runs: dict[str, Path]) -> None:
    """Each curve holds the quantiles the summary computes from the same histogram, rounded
    alike (the fixture's histograms are not its summary's: a real run's are, in the Chromium
    test)."""
    from llmload.export.distributions import read_histograms
    from llmload.results.from_stats import latency_ms

    run = runs["engine-a"]
    data = chart_data(write_report(run).read_text(encoding="utf-8"))
    stages = read_histograms(run)
    assert stages is not None
    for figure in (f for f in data["figures"] if f["name"] in DISTRIBUTIONS):
        metric = figure["name"].removeprefix("dist_")
        assert figure["xscale"] == "nines"
        assert len(figure["series"]) == len(stages)
        for series in figure["series"]:
            latency = latency_ms(stages[series["stage"]][metric])
            assert latency is not None
            at = dict(zip(series["x"], series["y"], strict=True))
            assert (at[0.5], at[0.99], at[0.999]) == (latency.p50, latency.p99, latency.p999)


def test_a_one_stage_run_draws_no_one_point_curves(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    s = load(run)
    s["stages"] = s["stages"][:1]
    (run / "summary.json").write_bytes(orjson.dumps(s))
    names = {f["name"] for f in chart_data(write_report(run).read_text(encoding="utf-8"))["figures"]}
    assert names == DISTRIBUTIONS | {"timeline"}


def test_warnings_come_first_and_loud(runs: dict[str, Path]) -> None:
    text = write_report(runs["engine-b"]).read_text(encoding="utf-8")
    box = text.index('class="warn"')
    assert box < text.index("<h2>Headline</h2>")
    assert "server: CUDA graphs are disabled (disable_cuda_graph=true)" in text
    assert "stage 5 (C=128) is CLIENT-BOUND" in text
    assert text.count('<tr class="bad">') == 1
    names = {f["name"] for f in chart_data(text)["figures"]}
    assert "timeline" not in names and "throughput" in names  # no timeseries.csv: no timeline


def test_speculative_decoding_acceptance_beside_tokens_per_event(runs: dict[str, Path]) -> None:
    run = runs["engine-c"]
    text = write_report(run).read_text(encoding="utf-8")
    assert "<h2>Speculative decoding</h2>" in text
    assert "<td>2.90</td><td>2.92</td><td>0.639</td>" in text
    row = raw_csv(run / "stages.csv")[0]
    assert (row["tokens_per_event"], row["server_acceptance_length"], row["server_acceptance_rate"]) == (
        "2.89609375",
        "2.916",
        "0.639",
    )
    assert "Speculative decoding" not in write_report(runs["engine-a"]).read_text(encoding="utf-8")


def test_user_strings_are_escaped(runs: dict[str, Path]) -> None:
    run = runs["engine-a"]
    s = load(run)
    s["server"]["warnings"] = ["<script>alert(1)</script> see https://evil.example/x"]
    s["run"]["model"] = "<b>m</b>"
    (run / "summary.json").write_bytes(orjson.dumps(s))
    text = write_report(run).read_text(encoding="utf-8")
    assert "<script>alert" not in text and "<b>m</b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; see https&#58;//evil.example/x" in text
    assert_self_contained(text)


def test_a_sparse_summary_still_reports(tmp_path: Path) -> None:
    run = tmp_path / "old"
    run.mkdir()
    stages = [
        {"index": 0, "concurrency": 4, "output_tok_per_s": 10.0, "ttft_ms": None},
        {"index": 1, "concurrency": 4},
    ]
    summary = {"run": {"id": "old"}, "stages": stages, "complete": False}
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    text = write_report(run).read_text(encoding="utf-8")
    assert "the run did not complete" in text
    rows = read_stages_csv(run / "stages.csv")
    assert [r["output_tok_per_s"] for r in rows] == [10.0, None]
    assert rows[0]["ttft_p50_ms"] is None and rows[1]["client_bound"] is False


def test_missing_or_broken_inputs_are_results_errors(tmp_path: Path, runs: dict[str, Path]) -> None:
    with pytest.raises(ResultsError, match=r"summary\.json is missing"):
        write_report(tmp_path)
    with pytest.raises(ResultsError, match="not a results directory"):
        write_report(tmp_path / "nope")
    (tmp_path / "summary.json").write_text("{")
    with pytest.raises(ResultsError, match="cannot read"):
        write_report(tmp_path)
    run = runs["engine-a"]
    (run / "timeseries.csv").write_text("t_s,stage,phase,output_tok_per_s,in_flight\n0,0,measure,fast,1\n")
    with pytest.raises(ResultsError, match=r"timeseries.csv:2: output_tok_per_s='fast' is not a number"):
        write_report(run)


def test_cli(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "elsewhere"
    assert cli.main(["report", str(runs["engine-c"]), "--out", str(out)]) == 0
    assert (out / "report.html").is_file() and not (runs["engine-c"] / "report.html").exists()
    assert cli.main(["report", str(tmp_path / "missing")]) == 2
    assert "llmload report: " in capsys.readouterr().err
    assert cli.main(["report", str(runs["engine-c"]), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### llmload · run `") and "| stage | C | ok |" in md


def test_acceptance_is_read_from_the_scraper_layout_and_sglang_gauge() -> None:
    from llmload.results.speculation import spec_decode
    from tests.support.summaries import stage

    vllm = stage(server={"spec_decode": {"acceptance_rate": 0.5, "mean_acceptance_length": 2.5}})
    sglang = stage(
        server={
            "spec_decode": {
                "acceptance_rate": None,
                "mean_acceptance_length": None,
                "accept_length_gauge_mean": 3.1,
            }
        }
    )
    assert spec_decode(vllm) == (0.5, 2.5)
    assert spec_decode(sglang) == (None, 3.1)
    assert spec_decode(stage(server={"spec_decode": None})) == (None, None)
    assert spec_decode(stage()) == (None, None)
