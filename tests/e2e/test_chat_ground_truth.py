"""Issue 3's acceptance: Locust + llmload against the simulator's ground truth.

Each bound is stated through the timing judge (docs/testing.md): its base is what the design
promises, and the noise of the run (the canary's, the simulator's own lateness, the client's
loop lag up to its health limit) is added by the judge at the statistic of the claim.
"""

from __future__ import annotations

import bisect
import math

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = [pytest.mark.e2e, pytest.mark.timing]

# The log-bucket histograms read a quantile within 1 % (docs/metrics.md): at a 20 ms step that
# is 0.2 ms, and a read stamped a little late moves one gap and the next by as much.
STEP_BASE_MS = 0.5


def tokens_written_at(timeline: list[tuple[int, int]], t_ns: int) -> float:
    """The simulator's cumulative tokens written at ``t_ns``, interpolated between steps."""
    times = [t for t, _ in timeline]
    i = bisect.bisect_right(times, t_ns)
    if i == 0:
        return float(timeline[0][1]) if t_ns >= times[0] else 0.0
    if i == len(timeline):
        return float(timeline[-1][1])
    (ta, ca), (tb, cb) = timeline[i - 1], timeline[i]
    return ca + (cb - ca) * (t_ns - ta) / (tb - ta) if tb > ta else float(ca)


def test_fixed_timing_streams_match_ground_truth(run_locust: RunLocust, judge: Judge) -> None:
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim:
        run = run_locust(sim.url, "--max-tokens", "128", "--ignore-eos", users=32, run_time="15s")
        served = {e["client_request_id"]: e for e in sim.requests()}
        counters = sim.counters()
        timeline = sim.timeline()
        stats = sim.stats()
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    measured = [r for r in run.records if r["phase"] == "measure" and r["outcome"] == "ok"]
    # What the client adds to each request's TTFT: the trip out, and how late it read the first
    # token after the server wrote it. Never negative (one clock, cause before effect); its median
    # is the client's own work, which the design holds under a millisecond.
    added = sorted(
        (
            r["first_token_ns"]
            - r["sent_ns"]
            - served[r["id"]]["first_token_ns"]
            + served[r["id"]]["arrival_ns"]
        )
        / 1e6
        for r in measured
    )
    print(f"client TTFT - server's, per request: p50 {added[len(added) // 2]:.3f} ms, max {added[-1]:.3f} ms")
    assert added[0] >= 0, added[0]
    judge.at_most(added[len(added) // 2], 1.0, Stat.MEDIAN, "client TTFT over the server's, median")
    # Against the timing the simulator was told, its own lateness is noise too: it is what it
    # was told, late by its own timer's lateness.
    judge.server(stats)
    server_ttft = sorted(
        (served[r["id"]]["first_token_ns"] - served[r["id"]]["arrival_ns"]) / 1e6 for r in measured
    )
    judge.close(server_ttft[len(server_ttft) // 2], 50, 1.0, Stat.MEDIAN, "the simulator's TTFT p50")
    judge.close(stage["itl_ms"]["p50"], 20, STEP_BASE_MS, Stat.MEDIAN, "ITL p50")
    judge.close(stage["tpot_ms"]["p50"], 20, STEP_BASE_MS, Stat.MEDIAN, "TPOT p50")
    assert stage["token_source"] == "usage"
    assert stage["requests"]["failed"] == 0

    records = run.records
    assert len(records) == len(served)
    assert sum(r["output_tokens"] for r in records) == counters["tokens_written_total"]

    # Tokens count by the time they were read; the simulator writes 32 at a step, so reading its
    # timeline between steps is within 64 tokens of ~40,000 at either edge.
    t0, t1 = stage["window_ns"]
    truth = (tokens_written_at(timeline, t1) - tokens_written_at(timeline, t0)) / ((t1 - t0) / 1e9)
    judge.rate(stage["output_tok_per_s"], truth, 0.005, "output tok/s against the tokens the simulator wrote")
    phases = {r["phase"] for r in records}
    assert "warmup" in phases and "measure" in phases


def test_speculative_chunks_split_itl_per_token(run_locust: RunLocust, judge: Judge) -> None:
    n = 128
    with start_sim(["--ttft-ms", "50", "--step-ms", "20", "--tokens-per-chunk", "3"]) as sim:
        run = run_locust(sim.url, "--max-tokens", str(n), "--ignore-eos", users=8, run_time="12s")
        judge.server(sim.stats())
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    judge.close(stage["itl_ms"]["p50"], 20 / 3, STEP_BASE_MS, Stat.MEDIAN, "ITL p50 of 3-token chunks")
    events_after_first = math.ceil((n - 1) / 3)
    tpot = 20 * events_after_first / (n - 1)
    judge.close(stage["tpot_ms"]["p50"], tpot, STEP_BASE_MS, Stat.MEDIAN, "TPOT p50 of 3-token chunks")
    assert stage["tokens_per_event"]["mean"] == pytest.approx((n - 1) / events_after_first, rel=1e-3)


def test_non_streaming_reports_e2e_and_usage_without_ttft(run_locust: RunLocust, judge: Judge) -> None:
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim:
        run = run_locust(sim.url, "--max-tokens", "16", "--ignore-eos", "--no-stream", users=4, run_time="6s")
        judge.server(sim.stats())
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    assert stage["ttft_ms"] is None and stage["itl_ms"] is None
    # 1 % of the histogram's resolution at 350 ms, and the trip out and back
    judge.close(stage["e2e_ms"]["p50"], 50 + 15 * 20, 4.0, Stat.MEDIAN, "E2E p50 of whole answers")
    assert stage["token_source"] == "usage"
    assert stage["output_tokens_per_request"]["mean"] == 16
