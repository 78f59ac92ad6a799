"""``OpenLoopUser``: requests sent on a schedule, not when a user is free (open loop).

Run exactly one per process (``-u`` = the number of processes): it takes this process's share
of the fleet's global seeded schedule (``workload/arrivals.py``), sends each request at its
scheduled time on a pool of keep-alive connections, and when ``--max-in-flight`` requests are
already out, later arrivals wait in the client. Their scheduled time is kept, so that wait shows
as client queue time and in end-to-end latency from ``scheduled``: a saturated server is seen,
not hidden (coordinated omission).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import gevent
from gevent.pool import Pool
from locust import task
from locust.runners import STATE_CLEANUP, STATE_STOPPED, STATE_STOPPING

from llmload.locust.user import SessionUser
from llmload.run.session import StageState
from llmload.transport.base import Transport
from llmload.workload.arrivals import ArrivalKind, Arrivals

_STOPPING = (STATE_STOPPING, STATE_CLEANUP, STATE_STOPPED)


def share_of(environment: Any) -> tuple[int, int]:
    """(this process's index, number of processes) for splitting the global schedule."""
    runner = environment.runner
    index = getattr(runner, "worker_index", -1)
    if index is None or index < 0:
        return 0, 1
    return index, max(int(environment.parsed_options.expect_workers or 1), index + 1)


class OpenLoopUser(SessionUser):
    scenario: ClassVar[str] = "open-loop"

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._idle: list[Transport] = []
        self._share = share_of(environment)

    def _stopping(self) -> bool:
        return bool(self.environment.runner.state in _STOPPING)

    @task
    def run_schedule(self) -> None:
        stage, state = self._session.current_state()
        if state is None or state.rate is None or state.started_ns is None:
            gevent.sleep(0.05)  # no open-loop stage announced yet
            return
        pool = Pool(state.concurrency)
        try:
            self._send_stage(stage, state, pool)
            pool.join()  # the drain: requests already sent may finish
        finally:
            pool.kill()  # killed at the drain's bound: in-flight requests become unfinished

    def _send_stage(self, stage: int, state: StageState, pool: Pool) -> None:
        cfg = self._session.config
        assert state.rate is not None and state.started_ns is not None
        kind: ArrivalKind = cfg.open_loop.arrival  # type: ignore[assignment]
        arrivals = Arrivals(
            state.rate, kind, cfg.open_loop.burstiness, seed=cfg.workload.seed * 1_000_003 + stage
        )
        for offset in arrivals.offsets(*self._share):
            due_ns = state.started_ns + int(offset * 1e9)
            delay = (due_ns - time.perf_counter_ns()) / 1e9
            if delay > 0:
                gevent.sleep(delay)
            if self._session.stage != stage or self._stopping():
                return
            pool.spawn(self._one, stage, state, due_ns)  # blocks while the pool is full

    def _one(self, stage: int, state: StageState, due_ns: int) -> None:
        transport = self._idle.pop() if self._idle else self._session.transports.new()
        self.client.send(
            self.prompt(),
            self.endpoint,
            transport=transport,
            stage_window=(stage, state.window),
            scheduled_ns=due_ns,
        )
        self._idle.append(transport)

    def on_stop(self) -> None:
        for transport in self._idle:
            transport.close()
