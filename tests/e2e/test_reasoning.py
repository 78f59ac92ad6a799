"""A reasoning model against the simulator's ground truth: thinking and answer counted apart.

The simulator's ``--reasoning-tokens N`` streams N tokens of ``reasoning_content`` before the
answer's ``content``; each client record is joined to the simulator's entry by its X-Request-Id.
"""

from __future__ import annotations

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = [pytest.mark.e2e]

THINK, STEP_MS, MAX_TOKENS = 24, 20, 64


@pytest.mark.timing
def test_reasoning_and_answer_tokens_and_ttfot_match_ground_truth(
    run_locust: RunLocust, judge: Judge
) -> None:
    args = ["--ttft-ms", "50", "--step-ms", str(STEP_MS), "--reasoning-tokens", str(THINK)]
    with start_sim(args) as sim:
        run = run_locust(sim.url, "--max-tokens", str(MAX_TOKENS), "--ignore-eos", users=4, run_time="6s")
        served = {e["client_request_id"]: e for e in sim.requests()}
        stats = sim.stats()
    records = [r for r in run.records if r["outcome"] == "ok"]
    assert len(records) >= 8
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    server_phase: list[float] = []
    off: list[float] = []
    for r in records:
        truth = served[r["id"]]
        assert r["reasoning_tokens"] == truth["reasoning_tokens"] == THINK
        assert r["answer_tokens"] == truth["completion_tokens"] - THINK == MAX_TOKENS - THINK
        if r["phase"] != "measure":
            continue  # the claims below are about the measured requests, as the summary's are
        # The thinking phase as the client saw it and as the server wrote it: one step per token.
        server_ms = (truth["first_answer_ns"] - truth["first_token_ns"]) / 1e6
        server_phase.append(server_ms)
        off.append((r["first_output_ns"] - r["first_token_ns"]) / 1e6 - server_ms)
    # Either end of the client's span is read late by its own work (well under a millisecond)
    # and by what the machine did to it then: every request, and the median.
    judge.at_most(
        max(abs(d) for d in off), 1.0, Stat.EVERY, "client's thinking phase off the server's, every request"
    )
    judge.close(
        sorted(off)[len(off) // 2], 0, 0.5, Stat.MEDIAN, "client's thinking phase off the server's, median"
    )
    # Against the timing the simulator was told, its own lateness is noise too: its phase is its
    # steps, each late by its own timer's lateness at most.
    judge.server(stats)
    worst_server = max(server_phase, key=lambda ms: abs(ms - THINK * STEP_MS))
    judge.close(
        worst_server, THINK * STEP_MS, 1.0, Stat.EVERY, "the simulator's thinking phase, every request"
    )
    reasoning = stage["reasoning"]
    assert reasoning["reasoning_share"] == pytest.approx(THINK / MAX_TOKENS)
    assert reasoning["reasoning_tokens"] == THINK * reasoning["requests"]
    assert reasoning["answer_tokens"] == (MAX_TOKENS - THINK) * reasoning["requests"]
    # The histograms' quantiles are within 1 % (docs/metrics.md): 4.8 ms of a 480 ms phase.
    ttfot_minus_ttft = stage["ttfot_ms"]["p50"] - stage["ttft_ms"]["p50"]
    judge.close(ttfot_minus_ttft, THINK * STEP_MS, 10.0, Stat.MEDIAN, "TTFOT p50 - TTFT p50")
    judge.close(reasoning["think_ms"]["p50"], THINK * STEP_MS, 5.0, Stat.MEDIAN, "thinking p50")
    judge.close(
        reasoning["tpot_reasoning_ms"]["p50"], STEP_MS, 0.5, Stat.MEDIAN, "TPOT of the reasoning, p50"
    )
    judge.close(reasoning["tpot_answer_ms"]["p50"], STEP_MS, 0.5, Stat.MEDIAN, "TPOT of the answer, p50")
    assert "reasoning" in run.output and "37.5% reasoning" in run.output


def test_a_whole_answer_counts_its_thinking_from_usage(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5", "--reasoning-tokens", "8"]) as sim:
        # no warm-up: every answer's count is the claim, and a loaded machine's slow start
        # must not leave a short window with nothing measured
        run = run_locust(
            sim.url, "--max-tokens", "32", "--ignore-eos", "--no-stream", "--warmup-requests", "0",
            users=2, run_time="5s",
        )  # fmt: skip
    records = [r for r in run.records if r["outcome"] == "ok"]
    assert records and all(r["reasoning_tokens"] == 8 and r["answer_tokens"] == 24 for r in records)
    assert run.summary["stages"][0]["reasoning"]["reasoning_share"] == pytest.approx(0.25)
