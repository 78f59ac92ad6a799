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
from collections.abc import Callable, Iterator
from typing import ClassVar

import gevent
from gevent.pool import Pool
from locust import task
from locust.env import Environment
from locust.runners import STATE_CLEANUP, STATE_STOPPED, STATE_STOPPING, WorkerRunner

from llmload.locust.env import options_of, runner_of
from llmload.locust.user import SessionUser
from llmload.run.process_run import StageState
from llmload.transport.base import Transport
from llmload.workload.arrivals import ArrivalKind, Arrivals
from llmload.workload.prompts import Prompt

_STOPPING = (STATE_STOPPING, STATE_CLEANUP, STATE_STOPPED)


def share_of(environment: Environment) -> tuple[int, int]:
    """(this process's index, number of processes) for splitting the global schedule."""
    runner = runner_of(environment)
    index = runner.worker_index if isinstance(runner, WorkerRunner) else -1
    if index is None or index < 0:
        return 0, 1
    return index, max(int(options_of(environment).expect_workers or 1), index + 1)


class OpenLoopUser(SessionUser):
    """Sends an open-loop stage's share of its schedule. Subclasses give another schedule by
    overriding ``start_ns`` and ``arrivals`` (``TraceUser``); the sending loop is this one."""

    scenario: ClassVar[str] = "open-loop"
    # Its requests are the workload's, so --tenants mixes them; a trace's are the trace's own.
    mixes_tenants: ClassVar[bool] = True

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._idle: list[Transport] = []
        self._share = share_of(environment)
        self._sent = -1  # the stage whose schedule ran out: it is not sent again

    def _stopping(self) -> bool:
        return bool(self.environment.runner.state in _STOPPING)

    @task
    def run_schedule(self) -> None:
        stage, state = self._session.current_state()
        start_ns = None if state is None or stage == self._sent else self.start_ns(state)
        if state is None or start_ns is None:
            gevent.sleep(0.05)  # no open-loop stage announced yet, or this one's schedule is done
            return
        pool = Pool(state.concurrency)
        try:
            self._send_stage(stage, state, start_ns, pool)
            self._sent = stage
            pool.join()  # the drain: requests already sent may finish
        finally:
            pool.kill()  # killed at the drain's bound: in-flight requests become unfinished

    def start_ns(self, state: StageState) -> int | None:
        """When the stage's schedule starts (``perf_counter_ns``); None: not an open-loop stage
        (yet). Arrivals start with the stage's warm-up, so that warm-up sees the same load."""
        return state.started_ns if state.rate is not None else None

    def arrivals(self, stage: int, state: StageState) -> Iterator[tuple[float, Callable[[], Prompt]]]:
        """This process's share of the stage's schedule: (seconds from the start, its prompt)."""
        cfg = self._session.config
        assert state.rate is not None
        kind: ArrivalKind = cfg.open_loop.arrival
        arrivals = Arrivals(
            state.rate, kind, cfg.open_loop.burstiness, seed=cfg.workload.seed * 1_000_003 + stage
        )
        for offset in arrivals.offsets(*self._share):
            yield offset, self.prompt

    def _send_stage(self, stage: int, state: StageState, start_ns: int, pool: Pool) -> None:
        for offset, prompt in self.arrivals(stage, state):
            due_ns = start_ns + int(offset * 1e9)
            delay = (due_ns - time.perf_counter_ns()) / 1e9
            if delay > 0:
                gevent.sleep(delay)
            if self._session.stage != stage or self._stopping():
                return
            pool.spawn(self._one, stage, state, due_ns, prompt)  # blocks while the pool is full

    def _one(self, stage: int, state: StageState, due_ns: int, prompt: Callable[[], Prompt]) -> None:
        transport = self._idle.pop() if self._idle else self._session.transports.new()
        tenants = self._session.tenants if self.mixes_tenants else None
        tenant, asked = (
            (None, prompt()) if tenants is None else tenants.next(self._user_id, self.client.count)
        )
        self.client.send(
            asked,
            self._session.config.request.api_for(self.endpoint),
            transport=transport,
            stage_window=(stage, state.window),
            scheduled_ns=due_ns,
            tenant=tenant,
        )
        self._idle.append(transport)

    def on_stop(self) -> None:
        for transport in self._idle:
            transport.close()
