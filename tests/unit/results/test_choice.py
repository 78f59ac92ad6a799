"""``llmload tune``'s answer: the best configuration under the objectives, by throughput and by
cost, and each configuration's highest level that met them."""

from __future__ import annotations

from llmload.results.choice import Candidate, Point, choose


def point(c: int, tok_s: float, meets: bool, usd: float | None = None) -> Point:
    return Point(c, None, tok_s, usd, meets)


A = Candidate("np=1", (point(1, 30, True, 0.9), point(4, 60, True, 0.5), point(8, 70, False, 0.4)))
B = Candidate("np=4", (point(1, 28, True, 1.0), point(4, 90, True, 0.3), point(8, 120, True, 0.2)))
C = Candidate("np=8", (), failed="never ready")


def test_the_best_meets_the_objectives_and_the_runner_up_is_named() -> None:
    choice = choose([A, B, C], "tpot_p50_ms<=50")
    assert choice.by_throughput is not None and choice.by_throughput.name == "np=4"
    assert choice.by_throughput.point.concurrency == 8
    assert choice.runner_up is not None and choice.runner_up.name == "np=1"
    assert choice.runner_up.point.output_tok_per_s == 60  # not 70: that level missed
    assert choice.line() == (
        "best under 'tpot_p50_ms<=50': np=4 at C=8, 120.0 tok/s, $0.20/M; np=1 reaches 60.0 tok/s"
    )


def test_highest_level_and_cheapest_count_only_what_met() -> None:
    assert A.highest == point(4, 60, True, 0.5)
    assert A.cheapest == point(4, 60, True, 0.5)
    assert C.highest is None and C.best is None


def test_the_cheapest_can_differ_from_the_fastest() -> None:
    fast = Candidate("fast", (point(8, 200, True, 2.0),))
    cheap = Candidate("cheap", (point(8, 150, True, 0.5),))
    line = choose([fast, cheap], "").line()
    assert line.startswith("best (no --slo: every level counts): fast at C=8, 200.0 tok/s, $2.00/M")
    assert "cheapest: cheap at C=8, $0.50/M (150.0 tok/s)" in line


def test_nothing_met() -> None:
    miss = Candidate("x", (point(1, 10, False),))
    choice = choose([miss], "ttft_p99_ms<=1")
    assert choice.by_throughput is None and choice.by_cost is None
    assert (
        "no configuration met the objectives under 'ttft_p99_ms<=1' at any of the 1 levels" in choice.line()
    )


def test_a_disqualified_configuration_is_never_recommended() -> None:
    drifted = Candidate("np=4", B.points, disqualified="answers drifted under load: 3/6 (50%) > 10%")
    choice = choose([A, drifted], "tpot_p50_ms<=50")
    assert choice.by_throughput is not None and choice.by_throughput.name == "np=1"
    assert choice.runner_up is None
    assert drifted.peak == point(8, 120, True, 0.2)  # its numbers stay in the table


def test_when_every_configuration_drifted_the_line_says_so() -> None:
    drifted = Candidate("np=4", B.points, disqualified="answers drifted")
    line = choose([drifted], "").line()
    assert line.endswith("at any of the 3 levels measured (1 ruled out: their answers drifted)"), line
