"""Client health: is this process fast enough for its timestamps to be trusted?

The judgement only; ``llmload.run.monitor`` measures (it needs gevent). A stage is
``client-bound`` when a process's loop lag or CPU crosses its limit, because then the stamps
taken at socket reads include time the client spent elsewhere (docs/metrics.md, client health).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class HealthLimits:
    """Provisional limits (docs/metrics.md); bench/ calibrates them."""

    loop_lag_p99_ms: float = 5.0
    cpu_fraction: float = 0.8


def is_client_bound(snapshot: Mapping[str, Any], limits: HealthLimits) -> bool:
    """True when a process's own lag or CPU means its timestamps cannot be trusted."""
    p99 = snapshot.get("loop_lag_p99_ms")
    lagging = p99 is not None and p99 > limits.loop_lag_p99_ms
    busy = float(snapshot.get("cpu_percent") or 0.0) > 100 * limits.cpu_fraction
    return bool(lagging or busy)
