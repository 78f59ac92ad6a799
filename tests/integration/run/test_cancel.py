"""--cancel against the real simulator, in a plain process: the client closes a request at its
delay (its lateness bounded by this process's own measured timer lateness), counts it apart
with the tokens it got, and the simulator frees the slot for the next request."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gevent
import pytest

from llmload.config.settings import PhaseConfig, RequestConfig, RunConfig, TransportConfig, WorkloadConfig
from llmload.core.phases import Phase
from llmload.core.record import CANCELLED, OK, RequestRecord
from llmload.core.recorder import Timeouts
from llmload.core.stages import Announcement
from llmload.run.llm_client import LLMClient
from llmload.run.session import Session
from llmload.sim.process import SimProcess, start_sim
from llmload.workload.cancel import CancelSpec

pytestmark = [pytest.mark.integration, pytest.mark.timing]

DELAY_S = 0.3


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    # One running sequence at a time: a request behind a cancelled one starts when the slot frees.
    with start_sim(["--seed", "4", "--max-running", "1"]) as process:
        yield process


@contextmanager
def _client(sim: SimProcess, tmp_path: Path, cancel: CancelSpec) -> Iterator[tuple[Session, LLMClient]]:
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
    session = Session(config)
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), 1))
    transport = session.transports.new()
    try:
        yield session, LLMClient(lambda **_: None, session, 0, lambda: transport)
    finally:
        transport.close()
        session.close()


def _timer_lateness_s(delay_s: float, n: int = 5) -> float:
    """How late this process's timers fire right now: the noise the cancel's time is within."""
    late = []
    for _ in range(n):
        t0 = time.perf_counter()
        gevent.sleep(delay_s / 10)
        late.append(time.perf_counter() - t0 - delay_s / 10)
    return max(late)


def _truth(sim: SimProcess, record: RequestRecord) -> dict[str, Any]:
    return [e for e in sim.requests() if e["client_request_id"] == record.request_id][-1]


def test_a_cancelled_request_is_closed_at_its_delay_and_its_slot_serves_the_next(
    sim: SimProcess, tmp_path: Path
) -> None:
    with _client(sim, tmp_path, CancelSpec(share=1.0, after_ms=(DELAY_S * 1000, DELAY_S * 1000))) as (
        session,
        client,
    ):
        late_s = _timer_lateness_s(DELAY_S)
        cancelled = client.send(session.prompts.get(0, 0), "chat")
        session.fold_pending()
        stats = session.take_stats()[0]
    assert cancelled.outcome == CANCELLED and cancelled.error_detail is not None
    assert "during decode" in cancelled.error_detail
    assert stats.outcomes == {"cancelled": 1} and stats.hist["ttft"].count == 0  # no latency from it
    held_ns = (cancelled.done_ns or 0) - (cancelled.began_ns or 0)
    # never before its delay; after it by no more than timers here are late, plus the unwinding
    assert DELAY_S * 1e9 <= held_ns <= (DELAY_S + 3 * late_s) * 1e9 + 2e6, (held_ns, late_s)
    truth = _truth(sim, cancelled)
    # the server saw the close, stopped generating, and wrote no more than the client read
    assert truth["outcome"] == "cancelled" and 0 < truth["completion_tokens"] < 400
    assert 0 < cancelled.output_tokens <= truth["completion_tokens"]

    with _client(sim, tmp_path / "after", CancelSpec()) as (session, client):  # one that cancels nothing
        follower = client.send(session.prompts.get(0, 1), "chat")
    assert follower.outcome == OK
    # The slot was free at once: the next request was scheduled long before the cancelled one
    # would have ended had it run its 400 tokens, at its own measured pace.
    tpot_ns = (truth["done_ns"] - truth["first_token_ns"]) / truth["completion_tokens"]
    would_end_ns = truth["first_token_ns"] + 399 * tpot_ns
    assert _truth(sim, follower)["scheduled_ns"] < would_end_ns - 100 * tpot_ns


def test_a_cancel_before_the_first_token_says_prefill_and_counts_no_token(
    sim: SimProcess, tmp_path: Path
) -> None:
    with _client(sim, tmp_path, CancelSpec(share=1.0, after_ms=(1.0, 1.0))) as (session, client):
        record = client.send(session.prompts.get(0, 0), "chat")
    assert record.outcome == CANCELLED and "during prefill" in (record.error_detail or "")
    assert record.first_token_ns is None and record.output_tokens == 0
