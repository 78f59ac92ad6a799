"""The worker → master message, as one typed object with its own wire form.

A worker ships one every ``--report-interval-s`` and a final one when its users have stopped
(``shipping.py``); the master merges each exactly once (``fleet.py``). Its size is bounded
whatever the request count: stats are histogram buckets and counters, never samples.

``stopped`` is set once the worker's run must end early: its first requests all failed the
same way (``failfast.py``: the master stops the fleet) or it was interrupted. ``seq`` increases
by one per message, so a duplicate is never merged twice.

On the wire (Locust's msgpack messages) it is its fields as ``metrics/wire.py`` encodes them:
stage keys are strings there, and ``wire.decode(Delta, data)`` gives back ints and objects. A
field missing from the message takes its empty value, as the master always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from llmload.core.health import HealthSnapshot
from llmload.core.stop import Stopped
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.timeseries import TimeSeries

MESSAGE = "llmload_delta"


@dataclass(frozen=True, slots=True)
class Delta:
    seq: int
    name: str
    records_file: str
    final: bool = False
    model: str | None = None
    stages: Mapping[int, StageStats] = field(default_factory=dict)  # since the last delta
    classic: Mapping[int, ClassicStats] = field(default_factory=dict)  # since the last delta
    timeseries: TimeSeries | None = None  # since the last delta
    # the worker's state now, not increments
    users: int = 0
    in_flight: int = 0
    records: int = 0
    tokens_received: int = 0
    completed: Mapping[int, int] = field(default_factory=dict)
    in_flight_measured: Mapping[int, int] = field(default_factory=dict)
    sent_measured: Mapping[int, int] = field(default_factory=dict)
    health_now: Mapping[str, float | None] = field(default_factory=dict)  # ProcessRun.health_now
    health: Mapping[int, HealthSnapshot] = field(default_factory=dict)
    lateness: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    stopped: Stopped | None = None
