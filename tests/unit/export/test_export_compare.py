"""`llmload compare`: the side-by-side table, ratios to the first run, noise, server differences."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llmload import cli
from llmload.errors import ConfigError
from llmload.export.compare import Value, compare, is_noise
from llmload.export.compare_render import console, figures, html_page, markdown
from llmload.export.rundata import load_run
from llmload.export.tables import read_stages_csv, stage_rows
from llmload.metrics.confidence import interval
from tests.support.pages import assert_self_contained, chart_data


def row_of(text: str, label: str) -> list[str]:
    """The cells of the console row starting with ``label`` (columns are 2+ spaces apart)."""
    line = next(line for line in text.splitlines() if line.startswith(label + "  "))
    return re.split(r"\s{2,}", line.strip())


def test_console_headline_with_ratios(runs: dict[str, Path]) -> None:
    text = console(compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])]))
    assert "  A  20250601-100000-aaaa (vllm 0.11.0)  ·  http://gpu-a:8000" in text
    assert "  B  20250601-110000-bbbb (sglang 0.5.3)  ·  http://gpu-b:30000" in text
    assert row_of(text, "single-stream output tok/s (C=1)") == [
        "single-stream output tok/s (C=1)",
        "82.5",
        "27.0",
        "0.33x",
    ]
    assert row_of(text, "peak output tok/s") == [
        "peak output tok/s",
        "1,536.0 at C=128",
        "2,216.0 at C=128",
        "1.44x",
    ]


def test_server_differences_sit_right_under_the_headline(runs: dict[str, Path]) -> None:
    text = console(compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])]))
    lines = text.splitlines()
    peak = next(i for i, line in enumerate(lines) if line.startswith("peak output tok/s"))
    assert lines[peak + 2] == "server differences:"
    assert row_of(text, "launch_args.disable_cuda_graph") == ["launch_args.disable_cuda_graph", "-", "true"]
    assert row_of(text, "engine") == ["engine", "vllm", "sglang"]
    assert "server_header" not in text and "models" not in text  # equal on both: not a difference
    assert "warning [20250601-110000-bbbb (sglang 0.5.3)]: server: CUDA graphs are disabled" in text


def test_chosen_levels_default_to_lowest_middle_highest(runs: dict[str, Path]) -> None:
    c = compare([load_run(runs[n]) for n in ("engine-a", "engine-b", "engine-c")])
    assert c.levels == (1, 32, 128)
    text = console(c)
    assert row_of(text, "TTFT p99 ms at C=128") == [
        "TTFT p99 ms at C=128",
        "435.00",
        "595.00",
        "405.00",
        "1.37x",
        "≈0.93x",  # 420 and 450 against 400 and 410 ms: within noise at two repeats
    ]
    assert row_of(text, "TPOT p50 ms at C=1") == [
        "TPOT p50 ms at C=1",
        "12.16",
        "36.77",
        "15.65",
        "3.02x",
        "1.29x",
    ]
    labels = [row.label for row in c.latency]
    assert labels[:7] == [
        "output tok/s at C=1",
        "TTFT p50 ms at C=1",
        "TTFT p99 ms at C=1",
        "ITL p50 ms at C=1",
        "ITL p99 ms at C=1",
        "TPOT p50 ms at C=1",
        "TPOT p99 ms at C=1",
    ]


def test_a_difference_within_both_runs_noise_is_marked(runs: dict[str, Path]) -> None:
    text = console(compare([load_run(runs["engine-a"]), load_run(runs["engine-c"])]))
    # TTFT p50 at C=1: A's repeats 20.1 and 21.0 ms, C's 20.5 and 21.2 ms
    assert row_of(text, "TTFT p50 ms at C=1")[-1] == "≈1.01x"
    # 24.0, 25.1 against 26.0, 26.5: the ranges are apart, but two repeats each are too few for
    # Welch's test to call 7% a difference (t 2.8 on 1.4 degrees of freedom)
    assert row_of(text, "TTFT p99 ms at C=1")[-1] == "≈1.07x"
    assert row_of(text, "TTFT p50 ms at C=32")[-1] == "0.89x"  # one repeat each: no noise measured
    assert "Welch's t-test over their repeats finds no difference at 95%" in text
    text = console(compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])]))
    # 1540 and 1532 tok/s against 2210 and 2222: far beyond either run's noise
    assert row_of(text, "output tok/s at C=128")[-1] == "1.44x"


def _value(*repeats: float) -> Value:
    return Value(sum(repeats) / len(repeats), interval(repeats))


def test_noise_needs_repeats_on_both_sides() -> None:
    assert is_noise(_value(10, 9, 11), _value(10.5, 10.2, 12))
    assert not is_noise(_value(10, 10.1, 9.9), _value(12, 12.1, 11.9))
    assert not is_noise(_value(10), _value(10.5, 10.2, 12))
    assert not is_noise(Value(10), Value(10))


def test_per_stage_rows_and_chosen_stages(runs: dict[str, Path]) -> None:
    c = compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])], stages=[8])
    assert c.levels == (8,)
    assert c.latency[0].label == "output tok/s at C=8"
    stage_labels = [r.label for r in c.per_stage]
    assert stage_labels[:4] == [
        "C=1 output tok/s",
        "C=1 decode tok/s per stream",
        "C=1 TTFT p50 ms",
        "C=1 TPOT p50 ms",
    ]
    assert len(stage_labels) == 16
    with pytest.raises(ConfigError, match=r"^--stages='64': level 64 is not in every run"):
        compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])], stages=[64])


def test_markdown(runs: dict[str, Path]) -> None:
    text = markdown(compare([load_run(runs["engine-a"]), load_run(runs["engine-b"])], stages=[1, 128]))
    assert (
        "|  | A: 20250601-100000-aaaa (vllm 0.11.0) | B: 20250601-110000-bbbb (sglang 0.5.3) | B/A |" in text
    )
    assert "| single-stream output tok/s (C=1) | 82.5 | 27.0 | 0.33x |" in text
    assert "| peak output tok/s | 1,536.0 at C=128 | 2,216.0 at C=128 | 1.44x |" in text
    head = text.index("| peak output tok/s")
    assert head < text.index("**Server differences**") < text.index("### At chosen concurrency levels")
    assert "| launch_args.disable_cuda_graph | - | true |" in text
    assert "| TTFT p99 ms at C=128 | 435.00 | 595.00 | 1.37x |" in text


def test_html_is_self_contained_with_overlaid_plots(runs: dict[str, Path]) -> None:
    c = compare([load_run(runs[n]) for n in ("engine-a", "engine-b", "engine-c")])
    text = html_page(c)
    assert_self_contained(text)
    names = [f["name"] for f in chart_data(text)["figures"]]
    assert names == ["compare_throughput", "compare_decode", "compare_pareto", "compare_pareto_ttft"]
    assert "<h3>Server differences</h3>" in text and 'class="warn"' in text
    throughput, _decode, *_pareto = figures(c)
    assert [s.label for s in throughput.series] == [run.label for run in c.runs]
    assert throughput.series[1].y == pytest.approx([27.0, 200.0, 700.0, 2216.0])


def test_overlaid_series_equal_each_runs_stages_csv(runs: dict[str, Path]) -> None:
    from llmload.export.report import write_report

    loaded = [load_run(runs[n]) for n in ("engine-a", "engine-c")]
    for run in loaded:
        write_report(run.path)
        assert read_stages_csv(run.path / "stages.csv") == stage_rows(run.summary)


def test_cli(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(runs["engine-a"]), str(runs["engine-b"])
    assert cli.main(["compare", a, b]) == 0
    assert "single-stream output tok/s (C=1)" in capsys.readouterr().out
    out = tmp_path / "cmp.md"
    assert cli.main(["compare", a, b, "--format", "markdown", "--out", str(out), "--stages", "1,128"]) == 0
    assert out.read_text().startswith("## llmload compare")
    assert cli.main(["compare", a]) == 2
    assert cli.main(["compare", a, b, "--stages", "1,x"]) == 2
    assert cli.main(["compare", a, str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "llmload compare: RUN_DIR=" in err and "--stages='1,x'" in err
    assert "none is not a results directory" in err


def test_probe_bookkeeping_is_not_a_server_difference(runs: dict[str, Path]) -> None:
    a, b = load_run(runs["engine-a"]), load_run(runs["engine-b"])
    for run, port in ((a, 8000), (b, 30000)):
        status = 200 if port == 8000 else 404
        run.summary.server.update(
            url=f"http://x:{port}", endpoints={"/version": status}, engine_evidence=[f"port {port}"]
        )
        run.summary.server["launch_args"]["port"] = port
    keys = [key for key, _values in compare([a, b]).server_diffs]
    assert keys[:2] == ["engine", "version"]
    assert not [k for k in keys if "port" in k or "endpoints" in k or "url" in k or "evidence" in k]


def test_the_pareto_frontier_over_three_engines(runs: dict[str, Path]) -> None:
    c = compare([load_run(runs[n]) for n in ("engine-a", "engine-b", "engine-c")])
    text = console(c)
    # vLLM holds the interactive end, SGLang with EAGLE-3 the throughput end, and SGLang with
    # its debug flag left on is beaten everywhere
    assert "  A: C=1, C=8" in text
    assert "  B: none (dominated at every level)" in text
    assert "  C: C=32, C=128" in text
    page = html_page(c)
    assert "<h2>Pareto frontier</h2>" in page and "Pareto frontier: TTFT p99 against throughput" in page
