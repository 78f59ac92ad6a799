"""Saturation in the headline, the console and the report, from the hand-made results."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from llmload.export import console
from llmload.export.report_page import render_report
from llmload.export.rundata import load_run, read_summary
from llmload.results.from_stats import headline
from llmload.results.summary import Saturation
from llmload.results.summary_stage import Stage


def plateaued(stages: tuple[Stage, ...]) -> list[Stage]:
    """engine-a, but C=128 gains nothing over C=32 and waits longer for its first token."""
    top = next(s for s in stages if s.concurrency == 128)
    c32 = next(s for s in stages if s.concurrency == 32)
    return [s if s is not top else replace(top, output_tok_per_s=c32.output_tok_per_s) for s in stages]


def test_a_sweep_that_grows_to_its_top_level_has_no_saturation(runs: dict[str, Path]) -> None:
    summary = read_summary(runs["engine-a"])
    head = headline(summary.stages)
    assert head.saturation is None
    assert [lv.ttft_p50_ms for lv in head.levels] == [20.55, 25.0, 45.0, 155.0]
    assert "saturation: not reached" in console.render(replace(summary, headline=head))


def test_the_plateau_is_named_in_the_headline_console_and_report(runs: dict[str, Path]) -> None:
    summary = read_summary(runs["engine-a"])
    head = headline(plateaued(summary.stages))
    assert head.saturation is not None and head.saturation.concurrency == 32
    assert "from C=32 to C=128" in head.saturation.reason
    text = console.render(replace(summary, headline=head))
    assert "headline: single-stream 82.5 tok/s" in text and "saturation: C=32 (1,100.0 output tok/s)" in text
    run = load_run(runs["engine-a"])
    page = render_report(replace(run, summary=replace(run.summary, headline=head)), [], "")
    assert "from C=32 to C=128" in page


def test_the_decision_that_stopped_a_sweep_is_kept_with_the_final_numbers(runs: dict[str, Path]) -> None:
    stages = plateaued(read_summary(runs["engine-a"]).stages)
    decided = Saturation(
        concurrency=32, rate_req_per_s=None, output_tok_per_s=1099.0, reason="mid-run", levels_not_run=("x",)
    )
    same = headline(stages, decided).saturation
    assert same is not None and same.stopped_sweep and same.levels_not_run == ("x",)
    assert same.output_tok_per_s == 1100.0  # the final numbers name the same level: theirs
    # late reports moved the final numbers off saturation: the decision that ended it stands
    grown = headline(read_summary(runs["engine-a"]).stages, decided).saturation
    assert grown is not None and grown.reason == "mid-run" and grown.stopped_sweep
