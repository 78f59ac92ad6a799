"""Client health: is this process fast enough for its timestamps to be trusted?

The judgement only; ``llmload.run.monitor`` measures (it needs gevent). A stage is
``client-bound`` when a process's loop lag or CPU crosses its limit, because then the stamps
taken at socket reads include time the client spent elsewhere (docs/metrics.md, client health).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HealthLimits:
    """Provisional limits (docs/metrics.md); bench/ calibrates them."""

    loop_lag_p99_ms: float = 5.0
    cpu_fraction: float = 0.8


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthSnapshot:
    """One process's health over a window: summary.json's ``client_health`` of a stage, per
    process, and a worker's delta carries one per stage (msgspec writes and reads it as
    declared). The defaults are a window without a sample (an older summary recorded only the
    p99 and the CPU)."""

    loop_lag_p50_ms: float | None = None
    loop_lag_p99_ms: float | None = None
    loop_lag_max_ms: float | None = None
    loop_lag_samples: int = 0
    cpu_percent: float = 0.0  # of one core


def is_client_bound(snapshot: HealthSnapshot, limits: HealthLimits) -> bool:
    """True when a process's own lag or CPU means its timestamps cannot be trusted."""
    p99 = snapshot.loop_lag_p99_ms
    lagging = p99 is not None and p99 > limits.loop_lag_p99_ms
    return lagging or snapshot.cpu_percent > 100 * limits.cpu_fraction
