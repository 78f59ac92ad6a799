"""A worker's wall clock against the master's, estimated from timed round trips.

The master stamps a probe as it leaves (``sent_ns``) and as the worker's reply arrives
(``received_ns``), both on its own wall clock; the worker stamps its reply on its own
(``worker_ns``). If both legs took equally long, the worker's clock read ``worker_ns`` when the
master's read the midpoint of the round trip, so the offset is ``worker_ns - midpoint``; however
the two legs really split, the truth lies within half the round trip of that, the estimate's
uncertainty (Cristian, "Probabilistic clock synchronization", Distributed Computing 3, 1989).
Queues and a busy loop only ever lengthen a round trip, so of several probes the shortest gives
the tightest bound: NTP's minimum filter (RFC 5905, section 10).

Latencies never need this: each is a difference of one process's monotonic clock. Wall time is
only what places a worker's phase edges and its per-second series on the master's timeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ClockProbe:
    sent_ns: int  # the master's wall clock as the probe left
    worker_ns: int  # the worker's wall clock as it replied
    received_ns: int  # the master's wall clock as the reply arrived

    @property
    def round_trip_ns(self) -> int:
        return self.received_ns - self.sent_ns


@dataclass(frozen=True, slots=True)
class ClockOffset:
    """How far a worker's wall clock is ahead of the master's (negative: behind)."""

    offset_s: float
    uncertainty_s: float  # half the shortest round trip: the truth is within this
    probes: int  # the round trips it was chosen from

    def to_master(self, worker_wall_s: float) -> float:
        return worker_wall_s - self.offset_s


def estimate(probes: Iterable[ClockProbe]) -> ClockOffset | None:
    """The offset by the shortest round trip; None without a probe that came back in order."""
    valid = [p for p in probes if p.round_trip_ns >= 0]
    if not valid:
        return None
    best = min(valid, key=lambda p: p.round_trip_ns)
    midpoint_ns = best.sent_ns + best.round_trip_ns // 2
    return ClockOffset(
        offset_s=(best.worker_ns - midpoint_ns) / _NS,
        uncertainty_s=best.round_trip_ns / 2 / _NS,
        probes=len(valid),
    )
