"""``llmload tune``'s table: a row per configuration with its single-stream and peak numbers,
tokens per chunk and acceptance at the peak, the answer drift when probes ran, and one example
of an answer that changed."""

from __future__ import annotations

from llmload.export.tune_render import Outcome, console, markdown, marks
from llmload.results.choice import Candidate, Point, choose
from llmload.results.drift import Drift

PLAIN = Candidate(
    "vllm",
    (Point(1, None, 82.0, None, True, 1.0), Point(128, None, 1530.0, None, False, 1.0)),
    single_stream_tok_per_s=82.4,
)
EAGLE = Candidate(
    "eagle",
    (Point(1, None, 160.0, None, True, 2.5, 0.51), Point(128, None, 1300.0, None, False, 2.53, 0.51)),
    single_stream_tok_per_s=165.0,
)


def test_tokens_per_chunk_and_acceptance_show_where_a_drafter_pays() -> None:
    outcomes = [
        Outcome("vllm", ("vllm",), "complete", "ok", 1.0),
        Outcome("eagle", ("eagle",), "complete", "ok", 1.0),
    ]
    text = console("x", ("profile",), outcomes, choose([PLAIN, EAGLE], "tpot_p50_ms<=70"))
    header, _, plain, eagle = text.splitlines()[2:6]
    assert "single-stream tok/s" in header and "tok/chunk" in header and "accept" in header
    assert "answers" not in header  # no probes ran
    assert "82.4" in plain and "1,530.0" in plain and " 1.00 " in plain
    assert "165.0" in eagle and "1,300.0" in eagle and "2.53" in eagle and "0.51" in eagle


def test_drift_columns_and_an_example_when_probes_ran() -> None:
    changed = Drift(6, 1, "'Compute 17 * 23': '391' vs '381'")
    outcomes = [
        Outcome("vllm", ("vllm",), "complete", "ok", 1.0, (Drift(6, 0), None)),
        Outcome("eagle", ("eagle",), "complete", "ok", 1.0, (Drift(5, 0), changed)),
    ]
    choice = choose([PLAIN, EAGLE], "")
    text = console("x", ("profile",), outcomes, choice)
    assert "answers changed under load" in text and "answers vs vllm" in text
    assert "0/6 (0%)" in text and "1/6 (17%)" in text
    assert "eagle, vs the first: 'Compute 17 * 23': '391' vs '381'" in text
    assert "Answers that changed:" in markdown("x", ("profile",), outcomes, choice)


def test_the_picks_are_marked_on_the_throughput_chart() -> None:
    priced = Candidate(
        "priced", (Point(1, None, 82.0, 9.0, True, 1.0), Point(8, None, 600.0, 1.5, True, 1.0))
    )
    assert marks(choose([PLAIN, priced])) == [
        ("best in SLO: priced at C=8", 8.0, 600.0),
        ("cheapest in SLO: priced at C=8", 8.0, 600.0),
    ]
    # a rate-driven best has no place on an axis of concurrency
    by_rate = Candidate("rated", (Point(None, 4.0, 700.0, None, True, 1.0),))
    assert marks(choose([PLAIN, priced, by_rate])) == [("cheapest in SLO: priced at C=8", 8.0, 600.0)]
