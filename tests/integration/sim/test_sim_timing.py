"""Fixed timing is what it says, seen from a raw-socket client, and the sim says how late it was.

The probe sees the issue's bounds (TTFT within 2 ms, event gaps within 1 ms) on medians; the
simulator's own stamps (``--emit-timestamps``, ``/sim/stats``, same clock) show its tails. Both the
simulator (``--realtime``) and the probe's thread run at SCHED_FIFO when permitted, so the test
measures them rather than the neighbours on a shared machine, and the timing judge takes the
machine's noise from the canary's SCHED_FIFO thread (``judge.realtime()``): what even a process
that claims the CPU first suffers here. The probe ramps its 32 streams 1 ms
apart: requests sent within the same 100 us queue in the simulator's one loop for ~50 us each
(mostly the loopback write of the response head), an admission queue that is not what fixed
timing is about.
"""

from __future__ import annotations

import itertools
import time

import pytest

from llmload.sim.process import start_sim
from tests.support.probe import percentile, probe, realtime_thread
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.integration

TTFT_MS, STEP_MS = 50, 20
MS = 1_000_000


@pytest.mark.timing
def test_fixed_timing_at_32_streams(judge: Judge) -> None:
    tokens = 40
    args = ["--ttft-ms", str(TTFT_MS), "--step-ms", str(STEP_MS), "--emit-timestamps", "--realtime"]
    with start_sim(args) as sim, realtime_thread() as probe_realtime:
        judge.during(time.perf_counter_ns())
        timings = probe(sim.port, streams=32, max_tokens=tokens, stagger_s=0.001)
        stats = sim.stats()
        truth = {e["client"]: e for e in sim.requests()}
    assert all(t.done for t in timings)
    assert all(len(t.server_sent_ns) == tokens for t in timings), "every token event arrived"
    if stats["realtime"] and probe_realtime:  # both ends shielded from neighbours
        judge.realtime()
    # not timing: at least one timer wake per token, counted
    assert stats["lateness"]["count"] >= tokens

    # What the probe sees (the bounds: TTFT within 2 ms, event gaps within 1 ms).
    ttft_p50 = percentile([abs(t.ttft_ns - TTFT_MS * MS) for t in timings], 0.5)
    judge.at_most(ttft_p50 / MS, 2, Stat.MEDIAN, "client TTFT error p50")
    gap_p50 = percentile([abs(g - STEP_MS * MS) for t in timings for g in t.gaps_ns()], 0.5)
    judge.at_most(gap_p50 / MS, 1, Stat.MEDIAN, "client gap error p50")

    # Same clock on both sides: a token is read after the simulator stamped it, soon after.
    delays = [r - s for t in timings for s, r in zip(t.server_sent_ns, t.token_read_of_event, strict=True)]
    assert min(delays) > 0
    judge.at_most(percentile(delays, 0.5) / MS, 1, Stat.MEDIAN, "read - sent_ns p50")

    # The simulator's own account of its tails: steps on time (the bound: lateness p99
    # under 1 ms), first tokens TTFT after arrival within the 2 ms a client is promised, events
    # STEP apart (its send stamps, free of the probe's own noise; one late wake spoils two gaps,
    # so p95 there, judged against the noise's p99).
    judge.at_most(stats["lateness"]["p99_ns"] / MS, 1, Stat.P99, "step lateness p99")
    server_ttft = [abs(e["first_token_ns"] - e["arrival_ns"] - TTFT_MS * MS) for e in truth.values()]
    # (a p99 of 32 requests is their worst: judged against the largest noise)
    judge.at_most(percentile(server_ttft, 0.99) / MS, 2, Stat.EVERY, "first-token error p99")
    sent = [abs(b - a - STEP_MS * MS) for t in timings for a, b in itertools.pairwise(t.server_sent_ns)]
    judge.at_most(percentile(sent, 0.95) / MS, 1, Stat.P99, "event spacing error p95")
