"""--cancel against the real simulator, in a plain process: the client closes a request at its
delay (late by no more than its unwinding and the machine's noise, as the timing judge measures
it), counts it apart with the tokens it got, and the simulator frees the slot for the next
request."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from llmload.config.asked import RequestConfig, WorkloadConfig
from llmload.config.settings import PhaseConfig, RunConfig, TransportConfig
from llmload.core.phases import Phase
from llmload.core.record import CANCELLED, OK, RequestRecord
from llmload.core.stages import Announcement
from llmload.core.timeouts import Timeouts
from llmload.run.llm_client import LLMClient
from llmload.run.process_run import ProcessRun
from llmload.sim.process import SimProcess, start_sim
from llmload.workload.cancel import CancelSpec
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.integration

DELAY_S = 0.3
UNWIND_MS = 2.0  # from the timer to the closed socket and the record's last stamp
SEEN_MS = 2.0  # the simulator reads the close on its loop at once: its own work (0.7 ms here)
STEP_MS = 13.0  # the simulator's default profile: one decode step of one sequence (12.1 ms)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    # One running sequence at a time: a request behind a cancelled one starts when the slot frees.
    with start_sim(["--seed", "4", "--max-running", "1"]) as process:
        yield process


@contextmanager
def _client(sim: SimProcess, tmp_path: Path, cancel: CancelSpec) -> Iterator[tuple[ProcessRun, LLMClient]]:
    config = RunConfig(
        host=sim.url,
        request=RequestConfig(model="sim-llama-3-8b"),
        workload=WorkloadConfig(prompt_tokens=32, max_tokens=400, cancel=cancel),
        phases=PhaseConfig(),
        timeouts=Timeouts(),
        transport=TransportConfig(sim.url),
        results_dir=str(tmp_path),
        run_id="cancel",
    )
    session = ProcessRun(config)
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), 1))
    transport = session.transports.new()
    try:
        yield session, LLMClient(lambda **_: None, session, 0, lambda: transport)
    finally:
        transport.close()
        session.close()


def _truth(sim: SimProcess, record: RequestRecord) -> dict[str, Any]:
    return [e for e in sim.requests() if e["client_request_id"] == record.request_id][-1]


@pytest.mark.timing
def test_a_cancelled_request_is_closed_at_its_delay_and_its_slot_serves_the_next(
    sim: SimProcess, tmp_path: Path, judge: Judge
) -> None:
    with _client(sim, tmp_path, CancelSpec(share=1.0, after_ms=(DELAY_S * 1000, DELAY_S * 1000))) as (
        session,
        client,
    ):
        cancelled = client.send(session.prompts.get(0, 0), "chat")
        session.fold_pending()
        stats = session.take_stats()[0]
    assert cancelled.outcome == CANCELLED and cancelled.error_detail is not None
    assert "during decode" in cancelled.error_detail
    assert stats.outcomes == {"cancelled": 1} and stats.hist["ttft"].count == 0  # no latency from it
    held_ns = (cancelled.done_ns or 0) - (cancelled.began_ns or 0)
    assert held_ns >= DELAY_S * 1e9, held_ns  # not timing: a timer never fires early
    judge.during(cancelled.began_ns or 0)  # to now: the canary stamps a wake-up a stall delayed after it
    judge.at_most(held_ns / 1e6 - DELAY_S * 1e3, UNWIND_MS, Stat.EVERY, "closed after its delay")
    truth = _truth(sim, cancelled)
    # the server read the close at once and stopped generating (400 tokens would take five
    # seconds), having written no more than the client read and what was on the way
    assert truth["outcome"] == "cancelled" and truth["completion_tokens"] > 0
    assert 0 < cancelled.output_tokens <= truth["completion_tokens"]
    judge.server(sim.stats(cancelled.began_ns or 0))
    stopped_ms = (truth["done_ns"] - (cancelled.done_ns or 0)) / 1e6
    judge.at_most(stopped_ms, SEEN_MS, Stat.EVERY, "the server stopped after the close")

    with _client(sim, tmp_path / "after", CancelSpec()) as (session, client):  # one that cancels nothing
        follower = client.send(session.prompts.get(0, 1), "chat")
    assert follower.outcome == OK
    # The slot was free at once: the next request (the only one) was admitted at the
    # simulator's next step after it arrived, not after the 400 tokens of the cancelled one.
    admitted = _truth(sim, follower)
    judge.server(sim.stats(cancelled.began_ns or 0))
    queued_ms = (admitted["scheduled_ns"] - admitted["arrival_ns"]) / 1e6
    judge.at_most(queued_ms, STEP_MS, Stat.EVERY, "the next request's wait for the freed slot")


@pytest.mark.timing
def test_a_cancel_before_the_first_token_says_prefill_and_counts_no_token(
    sim: SimProcess, tmp_path: Path, judge: Judge
) -> None:
    with _client(sim, tmp_path, CancelSpec(share=1.0, after_ms=(1.0, 1.0))) as (session, client):
        record = client.send(session.prompts.get(0, 0), "chat")
    # closed at 1 ms, long before a prefill step (13 ms) could give a first token
    held_ms = ((record.done_ns or 0) - (record.began_ns or 0)) / 1e6
    judge.during(record.began_ns or 0)
    judge.at_most(held_ms - 1.0, UNWIND_MS, Stat.EVERY, "closed after its 1 ms delay")
    assert record.outcome == CANCELLED and "during prefill" in (record.error_detail or "")
    assert record.first_token_ns is None and record.output_tokens == 0
