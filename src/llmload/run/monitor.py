"""Client health, measured: is this process fast enough for its timestamps to be trusted?

A greenlet measures how late the gevent hub wakes it (event-loop lag) at random times, Poisson
with a mean of 20 ms: a fixed period aliases with the engine's step (the simulator's 20 ms step
and a 20 ms tick sampled the same phase of every step, and a client throttled right after each
burst of events read a lag p99 of 1.2 ms while its events were 15 ms late at p99;
bench/client_bound.py, level q20), where Poisson samples see the time average. CPU comes from
``process_time``. ``llmload.core.health`` judges a snapshot against the limits.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import gevent

from llmload.core.health import HealthLimits, HealthSnapshot, is_client_bound
from llmload.metrics.histogram import LogHistogram


class HealthMonitor:
    """Samples loop lag every ``interval_s``; ``snapshot`` reports since the last ``reset``."""

    def __init__(
        self, interval_s: float = 0.02, limits: HealthLimits | None = None, rng: random.Random | None = None
    ) -> None:
        self.limits = limits or HealthLimits()
        self._interval_ns = int(interval_s * 1e9)
        self._rng = rng or random.Random()
        self._lag = LogHistogram()
        self._greenlet: gevent.Greenlet[[], None] | None = None
        self._since_ns = time.perf_counter_ns()
        self._cpu_since = time.process_time()

    def start(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._run)

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None

    def wake_gaps_ns(self) -> Iterator[int]:
        """Gaps between wake-ups: exponential (Poisson times), at least 1 ms, so that no
        periodic activity of the client or the server is sampled at one phase only."""
        mean = self._interval_ns
        while True:
            yield max(1_000_000, int(self._rng.expovariate(1.0) * mean))

    def _run(self) -> None:
        for gap_ns in self.wake_gaps_ns():
            due = time.perf_counter_ns() + gap_ns
            gevent.sleep(gap_ns / 1e9)
            self.observe(max(0, time.perf_counter_ns() - due))

    def observe(self, lag_ns: int) -> None:
        """One timer wake-up ``lag_ns`` late. A stall covers the wake-ups it swallowed, and
        every event arriving during it waited too: count those missed ticks with the lag each
        would have seen, so the p99 weighs a long stall by the time it lasted, not as one
        sample."""
        step = self._interval_ns
        for missed in range(lag_ns // step, 0, -1):
            self._lag.add(lag_ns - missed * step)
        self._lag.add(lag_ns)

    def reset(self) -> None:
        self._lag = LogHistogram()
        self._since_ns = time.perf_counter_ns()
        self._cpu_since = time.process_time()

    def snapshot(self) -> HealthSnapshot:
        wall = (time.perf_counter_ns() - self._since_ns) / 1e9
        cpu = (time.process_time() - self._cpu_since) / wall if wall > 0 else 0.0
        lag = self._lag
        p99 = (lag.quantile(0.99) or 0) / 1e6 if lag.count else None
        return HealthSnapshot(
            loop_lag_p50_ms=round((lag.quantile(0.5) or 0) / 1e6, 3) if lag.count else None,
            loop_lag_p99_ms=None if p99 is None else round(p99, 3),
            loop_lag_max_ms=round(lag.max / 1e6, 3) if lag.max is not None else None,
            loop_lag_samples=lag.count,
            cpu_percent=round(100 * cpu, 1),
        )

    def is_bound(self, snapshot: HealthSnapshot) -> bool:
        return is_client_bound(snapshot, self.limits)
