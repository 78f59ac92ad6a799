"""Phases: where a request fell relative to its stage's measured window, and where a stage is.

One enum serves both, because they are one clock read two ways: a stage goes warm-up → measure
→ drain → done, and a request's phase is the stage's phase at the moment it was sent (a request
is never sent in ``DONE``). ``Window`` is that clock in one process's ``perf_counter_ns``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Phase(StrEnum):
    WARMUP = "warmup"
    MEASURE = "measure"
    DRAIN = "drain"
    DONE = "done"  # a stage's only: its drain is over


@dataclass(slots=True)
class Window:
    """A stage's measured window in this process's ``perf_counter_ns``; None until known."""

    t0_ns: int | None = None
    t1_ns: int | None = None

    def phase_at(self, t_ns: int) -> Phase:
        if self.t0_ns is None or t_ns < self.t0_ns:
            return Phase.WARMUP
        if self.t1_ns is None or t_ns < self.t1_ns:
            return Phase.MEASURE
        return Phase.DRAIN

    def contains(self, t_ns: int | None) -> bool:
        return t_ns is not None and self.phase_at(t_ns) is Phase.MEASURE

    def open_s(self, now_ns: int) -> float:
        """Seconds the window has been open at ``now_ns`` (0 before it opens or once closed)."""
        if self.t0_ns is None or self.t1_ns is not None:
            return 0.0
        return max(0, now_ns - self.t0_ns) / 1e9
