"""Client health: a stall weighs by how long it lasted, and the limits decide client-bound."""

from __future__ import annotations

from llmload.health import HealthLimits, HealthMonitor, is_client_bound

MS = 1_000_000


def test_a_long_stall_counts_every_tick_it_swallowed() -> None:
    monitor = HealthMonitor(interval_s=0.02)
    for _ in range(95):
        monitor.observe(0)
    monitor.observe(100 * MS)  # one wake-up 100 ms late swallowed 5 ticks
    snap = monitor.snapshot()
    assert snap["loop_lag_samples"] == 101
    assert snap["loop_lag_p99_ms"] >= 60  # one late wake-up alone would leave the p99 at 0


def test_limits() -> None:
    limits = HealthLimits(loop_lag_p99_ms=5.0, cpu_fraction=0.8)
    assert not is_client_bound({"loop_lag_p99_ms": 4.9, "cpu_percent": 50.0}, limits)
    assert is_client_bound({"loop_lag_p99_ms": 5.1, "cpu_percent": 10.0}, limits)
    assert is_client_bound({"loop_lag_p99_ms": None, "cpu_percent": 81.0}, limits)
