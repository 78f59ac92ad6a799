"""Client health: a stall weighs by how long it lasted, and the limits decide client-bound."""

from __future__ import annotations

import itertools
import random
import statistics
import time

import gevent

from llmload.core.health import HealthLimits, HealthSnapshot, is_client_bound
from llmload.run.monitor import HealthMonitor

MS = 1_000_000


def test_a_long_stall_counts_every_tick_it_swallowed() -> None:
    monitor = HealthMonitor(interval_s=0.02)
    for _ in range(95):
        monitor.observe(0)
    monitor.observe(100 * MS)  # one wake-up 100 ms late swallowed 5 ticks
    snap = monitor.snapshot()
    assert snap.loop_lag_samples == 101
    # not timing: synthetic lateness fed in; one late wake-up alone would leave the p99 at 0
    assert snap.loop_lag_p99_ms >= 60


def test_limits() -> None:
    limits = HealthLimits(loop_lag_p99_ms=5.0, cpu_fraction=0.8)
    assert not is_client_bound(HealthSnapshot(loop_lag_p99_ms=4.9, cpu_percent=50.0), limits)
    assert is_client_bound(HealthSnapshot(loop_lag_p99_ms=5.1, cpu_percent=10.0), limits)
    assert is_client_bound(HealthSnapshot(loop_lag_p99_ms=None, cpu_percent=81.0), limits)


def test_wake_ups_are_poisson_so_no_period_is_sampled_at_one_phase() -> None:
    monitor = HealthMonitor(interval_s=0.02, rng=random.Random(7))
    gaps = list(itertools.islice(monitor.wake_gaps_ns(), 5000))
    mean = statistics.fmean(gaps)
    assert 0.95 * 20 * MS < mean < 1.05 * 20 * MS  # not timing: a seeded draw of the gaps
    assert 0.9 < statistics.pstdev(gaps) / mean < 1.1  # not timing: exponential, spread = mean


def test_stalls_in_step_with_the_sampling_mean_are_still_seen() -> None:
    """The loop stalls 10 ms in every 20 ms, the mean sampling interval: a 20 ms tick would see
    one phase of that pattern only (bench/client_bound.py met exactly this), Poisson ticks see
    stalls about half the time, and the lag p99 is about the stall's length."""
    monitor = HealthMonitor(interval_s=0.02, rng=random.Random(3))

    def stall_every_20_ms() -> None:
        while True:
            start = time.perf_counter()
            while time.perf_counter() - start < 0.010:
                pass  # the loop is blocked: no greenlet runs
            gevent.sleep(0.010)

    staller = gevent.spawn(stall_every_20_ms)
    monitor.start()
    gevent.sleep(1.5)
    monitor.stop()
    staller.kill()
    snap = monitor.snapshot()
    assert snap.loop_lag_samples > 30
    assert snap.loop_lag_p99_ms >= 4.0  # not timing: a floor (the stalls made), noise only raises it
