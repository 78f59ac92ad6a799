"""The gate's judgement on records of known numbers (results/gate.py): what is a regression,
what is noise, what is too little to say, and the run that is not judged at all."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import replace

import pytest

from llmload.export import gate_render
from llmload.results.comparable import ComparabilityKey
from llmload.results.gate import CellOutcome, GateCode, judge_run, run_noise
from llmload.results.gate_policy import DEFAULT_POLICY, Direction, GatePolicy, MetricRule
from llmload.results.runrecord import ClientInfo, RunRecord, ServerPrint, StageRecord

KEY = ComparabilityKey(
    scenario="sweep",
    prompt_tokens="128",
    output_tokens="64",
    ignore_eos=True,
    api="chat",
    stream=True,
    model="m",
    hardware=None,
)
TOK = GatePolicy(rules=(MetricRule("output_tok_per_s", 0.03, Direction.HIGHER),))


def stage(index: int, repeat: int, tok_s: float, *, ttft_p99: float = 50.0, ok: int = 1000) -> StageRecord:
    return StageRecord(
        index=index,
        repeat=repeat,
        concurrency=16,
        rate_req_per_s=None,
        output_tok_per_s=tok_s,
        ttft_p50_ms=20.0,
        ttft_p99_ms=ttft_p99,
        tpot_p50_ms=10.0,
        tpot_p99_ms=12.0,
        itl_p99_ms=12.0,
        e2e_p50_ms=600.0,
        error_rate=0.0,
        goodput_req_per_s=None,
        requests_ok=ok,
        requests_failed=0,
        client_bound=False,
        partial=False,
    )


def run(name: str, tok_s: Sequence[float], *, at: float = 0.0, **kw: object) -> RunRecord:
    stages = tuple(stage(i, i, v) for i, v in enumerate(tok_s))
    record = RunRecord(
        run_id=name,
        started_at=f"t{at}",
        started_s=at,
        results_dir="/r",
        key=KEY,
        server=ServerPrint(engine="vllm", version="0.9.1", models=("m",), launch_args=None),
        client=ClientInfo(version="1", host="h", git_commit=None),
        labels=(),
        exit_code=0,
        verdict="ok",
        verdict_line="ok",
        complete=True,
        single_stream_tok_per_s=None,
        peak_tok_per_s=None,
        peak_concurrency=None,
        stages=stages,
    )
    return replace(record, **kw)  # type: ignore[arg-type]


def noisy(mean: float, sd: float, n: int, rng: random.Random) -> list[float]:
    return [rng.gauss(mean, sd) for _ in range(n)]


def test_identical_runs_pass_and_a_ten_percent_drop_is_a_regression() -> None:
    rng = random.Random(7)
    base = run("base", noisy(1000, 5, 3, rng))
    same = judge_run(run("same", noisy(1000, 5, 3, rng)), [base], [base], TOK, baseline="b")
    assert same.code is GateCode.PASS and [c.outcome for c in same.cells] == [CellOutcome.PASS]
    slow = judge_run(run("slow", noisy(900, 5, 3, rng)), [base], [base], TOK, baseline="b")
    assert slow.code is GateCode.REGRESSION, slow.line
    (cell,) = slow.cells
    assert cell.worse_by == pytest.approx(0.1, abs=0.02) and cell.p_adjusted is not None
    assert cell.p_adjusted < 0.05 and "worse" in slow.line


def test_a_significant_change_smaller_than_the_minimum_effect_passes() -> None:
    base = run("base", [1000.0, 1000.1, 999.9])
    result = judge_run(run("c", [980.0, 980.1, 979.9]), [base], [base], TOK, baseline="b")  # 2%, p ~ 0
    (cell,) = result.cells
    assert result.code is GateCode.PASS and cell.p_adjusted is not None and cell.p_adjusted < 1e-6


def test_a_large_change_within_the_repeats_noise_is_not_called() -> None:
    base = run("base", [1000.0, 800.0, 1200.0])
    result = judge_run(run("c", [950.0, 750.0, 1150.0]), [base], [base], TOK, baseline="b")
    assert result.code is GateCode.PASS and result.cells[0].worse_by == pytest.approx(0.05)


def test_the_keys_history_widens_the_limit_to_twice_its_run_to_run_noise() -> None:
    rng = random.Random(3)
    history = [run(f"h{i}", [v, v, v], at=-i) for i, v in enumerate(noisy(1000, 40, 12, rng))]
    noise = run_noise(history, "output_tok_per_s", "16")
    assert noise is not None and 0.02 < noise.cv < 0.07
    result = judge_run(run("c", [950.0, 950.5, 949.5]), history[:1], history, TOK, baseline="b")
    assert result.cells[0].limit == pytest.approx(2 * noise.cv)
    # one step in the history moves one successive difference: the noise stays the noise
    stepped = [run(f"s{i}", [v, v], at=-i) for i, v in enumerate([1000.0] * 6 + [800.0] * 6)]
    stepped_noise = run_noise(stepped, "output_tok_per_s", "16")
    assert stepped_noise is not None and stepped_noise.cv == 0.0


def test_runs_that_wander_more_than_their_repeats_are_judged_by_the_wander() -> None:
    # Each run's three repeats agree to 0.1%, but run means wander by 2% (a fresh server, the
    # machine's state): the repeats alone would call a 4.4% drop certain.
    rng = random.Random(5)
    history = [run(f"h{i}", noisy(m, 1, 3, rng), at=-i) for i, m in enumerate(noisy(1000, 20, 12, rng))]
    noise = run_noise(history, "output_tok_per_s", "16")
    assert noise is not None and noise.between > 0.9 * noise.cv**2  # nearly all of it between runs
    base = sum(s.output_tok_per_s or 0 for s in history[0].stages) / 3
    just_over = base * (1 - 2.1 * noise.cv)
    near = judge_run(run("c", noisy(just_over, 1, 3, rng), at=1), history[:1], history, TOK, baseline="b")
    (cell,) = near.cells
    assert (cell.worse_by or 0) > cell.limit, cell  # past twice the noise
    assert near.code is GateCode.PASS and cell.p_adjusted is not None and cell.p_adjusted > 0.05, cell
    blind = judge_run(run("c", noisy(just_over, 1, 3, rng), at=1), history[:1], [], TOK, baseline="b")
    assert blind.cells[0].p_adjusted is not None and blind.cells[0].p_adjusted < 1e-3  # without history
    far = judge_run(run("c", noisy(base * 0.9, 1, 3, rng), at=1), history[:1], history, TOK, baseline="b")
    assert far.code is GateCode.REGRESSION, far.line


def test_too_few_repeats_or_requests_for_a_tail_is_insufficient_data_never_a_pass() -> None:
    base = run("base", [1000.0, 1001.0, 999.0])
    one = judge_run(run("c", [1000.0]), [base], [base], TOK, baseline="b")
    assert one.code is GateCode.INSUFFICIENT_DATA and "1 repeat(s) against 3" in one.line
    p99 = GatePolicy(rules=(MetricRule("ttft_p99_ms", 0.06, Direction.LOWER),))
    few = run("few", [1.0, 1.0, 1.0], stages=tuple(stage(i, i, 1.0, ok=300) for i in range(3)))
    result = judge_run(few, [base], [base], p99, baseline="b")
    assert result.code is GateCode.INSUFFICIENT_DATA and "needs 459" in result.line
    nothing = judge_run(run("c", [1000.0] * 3), [], [], TOK, baseline="the last 5 comparable runs")
    assert nothing.code is GateCode.INSUFFICIENT_DATA and not nothing.cells


def test_a_run_that_failed_its_own_checks_is_not_judged() -> None:
    failed = run("c", [1.0] * 3, exit_code=3, verdict="slo_missed", verdict_line="slo missed: ttft p99")
    result = judge_run(failed, [run("b", [1000.0] * 3)], [], TOK, baseline="b")
    assert result.code is GateCode.RUN_FAILED and "slo missed" in result.line and not result.cells


def test_holm_counts_every_cell_judged_and_a_waiver_passes_the_regression_naming_it() -> None:
    rng = random.Random(11)
    base = run("base", noisy(1000, 30, 3, rng))
    slow = run("slow", noisy(940, 30, 3, rng))
    one = judge_run(slow, [base], [base], TOK, baseline="b").cells[0]
    many = GatePolicy(rules=DEFAULT_POLICY.rules)
    cell = next(
        c for c in judge_run(slow, [base], [base], many, baseline="b").cells if c.metric == "output_tok_per_s"
    )
    assert one.p is not None and cell.p_adjusted is not None and one.p_adjusted is not None
    assert cell.p_adjusted >= one.p_adjusted  # five cells judged: more evidence needed
    waived = judge_run(run("slow", [900.0] * 3), [base], [base], TOK, baseline="b", waiver="new scheduler")
    assert waived.code is GateCode.PASS and waived.line.endswith("accepted: new scheduler")


def test_a_rolling_baseline_that_drifted_from_the_pinned_run_is_said() -> None:
    pinned = run("pinned", [1000.0, 1000.5, 999.5])
    rolling = [run(f"r{i}", [v, v + 0.5, v - 0.5]) for i, v in enumerate((940.0, 945.0))]
    result = judge_run(run("c", [941.0, 941.5, 940.5]), rolling, rolling, TOK, baseline="b", pinned=pinned)
    assert result.code is GateCode.PASS
    (warning,) = result.warnings
    assert "5.8% worse than the pinned run pinned's" in warning


def test_markdown_and_junit_say_what_the_terminal_says() -> None:
    base = run("base", [1000.0, 1001.0, 999.0])
    policy = GatePolicy(rules=(*TOK.rules, MetricRule("ttft_p99_ms", 0.06, Direction.LOWER)))
    few = tuple(stage(i, i, v, ok=100) for i, v in enumerate((900.0, 901.0, 899.0)))
    result = judge_run(
        run("slow", [], stages=few), [base], [base], policy, baseline="the last 1 comparable runs"
    )
    assert result.code is GateCode.REGRESSION
    md = gate_render.markdown(result)
    assert md.startswith("### REGRESSION: run slow (vllm 0.9.1) against the last 1 comparable runs")
    assert "| output_tok_per_s | 16 | 1000 ±1 (n=3) | 900 ±1 (n=3) | +10.0% worse | 3.0% |" in md
    assert "| ttft_p99_ms | 16 |" in md and "insufficient data: has 100 requests in a repeat" in md
    assert gate_render.text(result).splitlines()[-1] == f"llmload gate: {result.line}"
    suite = ET.fromstring(gate_render.junit(result))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    failed, skipped = suite.findall("testcase")
    assert failed.get("name") == "output_tok_per_s @ 16" and failed.find("failure") is not None
    assert skipped.find("skipped") is not None and failed.get("classname") == f"llmload.gate.{KEY.hash}"
    waived = replace(result, code=GateCode.PASS, waiver="accepted")
    assert ET.fromstring(gate_render.junit(waived)).get("failures") == "0"
    assert "ACCEPTED REGRESSION" in gate_render.text(waived)
