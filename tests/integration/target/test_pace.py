"""``target/pace.py``'s ``stream_rate`` against the real simulator: the pace ``--processes auto``
sizes a plan by, and None where no pace can be had."""

from __future__ import annotations

import time

import pytest

from llmload.sim.process import start_sim
from llmload.target.pace import PROBE_TOKENS, stream_rate
from tests.support.fleet import free_port
from tests.support.timing.judge import Judge

pytestmark = pytest.mark.integration

SIM_TOK_S = 50.0  # --step-ms 20: one token-bearing event every 20 ms
SPAN_MS = (PROBE_TOKENS - 2) * 20  # from the second token-bearing event to the last
READ_MS = 1.0  # the probe's own work from an event's arrival to its stamp (httpx, the parse)


@pytest.mark.timing
def test_one_stream_is_paced_at_the_simulators_step(judge: Judge) -> None:
    with start_sim(["--ttft-ms", "0", "--step-ms", "20"]) as sim:
        judge.during(time.perf_counter_ns())
        named = stream_rate(sim.url, None, None)  # the model from /v1/models
        given = stream_rate(sim.url, "any-name", None)  # the simulator serves any model name
        served = sim.requests()
        judge.server(sim.stats())
    # The simulator's steps are drift-free, so the span of 46 steps (under a second) is off
    # only by the reads at its two ends: the probe's own work there (the base; the old factor of
    # two was room for a busy machine), and what the machine's scheduler and the simulator's own
    # lateness add, which the judge measures.
    for rate in (named, given):
        assert rate is not None
        judge.rate(rate, SIM_TOK_S, 2 * READ_MS / SPAN_MS, "one stream's pace", window_ms=SPAN_MS)
    assert len(served) == 2
    assert all(r["completion_tokens"] == PROBE_TOKENS for r in served), served


def test_a_server_that_answers_no_stream_gives_no_pace() -> None:
    # The simulator serves whatever model is asked, so it cannot reject an unknown one: a 400 on
    # every request is how a server that does not serve the model asked answers instead.
    with start_sim(["--ttft-ms", "0", "--step-ms", "20", "--fault", "http_400"]) as sim:
        assert stream_rate(sim.url, "not-served", None) is None
        assert stream_rate(sim.url, None, None) is None


def test_a_port_nothing_listens_on_gives_no_pace() -> None:
    assert stream_rate(f"http://127.0.0.1:{free_port()}", None, None) is None
    assert stream_rate(f"http://127.0.0.1:{free_port()}", "m", None) is None
