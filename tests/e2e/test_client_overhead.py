"""What llmload's client adds to a first token's read, against a bare reference client on the same
simulator in the same minutes: the machine's noise is in both and cancels in their difference; a
slower client does not.

The reference is the suite's probe (tests/support/probe.py): one thread, one ``selectors`` loop,
raw sockets, every read stamped as ``recv`` returns, nothing parsed. Rounds alternate which client
goes first, as bench/accuracy_ab.py alternates revisions. Each client's figure is the median over
its requests of how late it read the first token after the simulator stamped it
(``--emit-timestamps``: the same clock, so nothing but the read's own lateness is in it).
"""

from __future__ import annotations

import statistics

import pytest

from llmload.sim.process import SimProcess, start_sim
from tests.e2e.conftest import RunLocust
from tests.support.probe import probe
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

ROUNDS = 3
STREAMS = 16
TOKENS = 32


def _bare_client_ms(sim: SimProcess) -> float:
    timings = probe(sim.port, streams=STREAMS, max_tokens=TOKENS, stagger_s=0.002)
    return statistics.median((t.token_read_of_event[0] - t.server_sent_ns[0]) / 1e6 for t in timings)


def _llmload_ms(sim: SimProcess, run_locust: RunLocust) -> float:
    run = run_locust(sim.url, "--max-tokens", str(TOKENS), "--ignore-eos", users=STREAMS, run_time="5s")
    served = {e["client_request_id"]: e for e in sim.requests()}
    measured = [r for r in run.records if r["phase"] == "measure" and r["outcome"] == "ok"]
    return statistics.median(
        (r["first_token_ns"] - served[r["id"]]["first_token_ns"]) / 1e6 for r in measured
    )


@pytest.mark.timing
def test_llmload_reads_a_first_token_within_a_fraction_of_a_millisecond_of_a_bare_client(
    run_locust: RunLocust, judge: Judge
) -> None:
    differences = []
    with start_sim(["--ttft-ms", "50", "--step-ms", "20", "--emit-timestamps"]) as sim:
        for i in range(ROUNDS):
            late = {}
            for client in ("bare", "llmload") if i % 2 == 0 else ("llmload", "bare"):
                late[client] = _bare_client_ms(sim) if client == "bare" else _llmload_ms(sim, run_locust)
            differences.append(late["llmload"] - late["bare"])
            print(f"round {i}: first-token read lateness p50 (ms): {late}")
    # Locust's gevent loop, the transport's framing and the recorder's parse of the event, at 16
    # streams: a fraction of a millisecond over a client that does nothing but read.
    judge.at_most(
        statistics.median(differences), 0.3, Stat.MEDIAN, "llmload's first-token read over a bare client's"
    )
