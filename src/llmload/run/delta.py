"""The worker → master message, as one typed object with its own wire form.

A worker ships one every ``--report-interval-s`` and a final one when its users have stopped
(``shipping.py``); the master merges each exactly once (``fleet.py``). Its size is bounded
whatever the request count: stats are histogram buckets and counters, never samples.

``stopped`` is set once the worker's run must end early: its first requests all failed the
same way (``failfast.py``: the master stops the fleet) or it was interrupted. ``seq`` increases
by one per message, so a duplicate is never merged twice.

On the wire (Locust's msgpack messages) stage keys are strings and stats are their ``to_dict``
forms; ``from_wire`` gives back ints and objects. A key missing from an older worker's message
takes its empty value, as the master always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.core.stop import Stop
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
    health_now: Mapping[str, Any] = field(default_factory=dict)
    health: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    lateness: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    stopped: Stop | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "name": self.name,
            "records_file": self.records_file,
            "final": self.final,
            "model": self.model,
            "stages": {str(k): v.to_dict() for k, v in self.stages.items()},
            "classic": {str(k): v.to_dict() for k, v in self.classic.items()},
            "timeseries": None if self.timeseries is None else self.timeseries.to_dict(),
            "users": self.users,
            "in_flight": self.in_flight,
            "records": self.records,
            "tokens_received": self.tokens_received,
            "completed": _str_keys(self.completed),
            "in_flight_measured": _str_keys(self.in_flight_measured),
            "health_now": dict(self.health_now),
            "health": _str_keys(self.health),
            "lateness": _str_keys(self.lateness),
            "warnings": list(self.warnings),
            "stopped": None if self.stopped is None else self.stopped.to_json(),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Delta:
        series = data.get("timeseries")
        return cls(
            seq=int(data["seq"]),
            name=str(data["name"]),
            records_file=str(data["records_file"]),
            final=bool(data.get("final")),
            model=data.get("model"),
            stages={int(k): StageStats.from_dict(v) for k, v in data.get("stages", {}).items()},
            classic={int(k): ClassicStats.from_dict(v) for k, v in data.get("classic", {}).items()},
            timeseries=None if series is None else TimeSeries.from_dict(series),
            users=int(data.get("users", 0)),
            in_flight=int(data.get("in_flight", 0)),
            records=int(data.get("records", 0)),
            tokens_received=int(data.get("tokens_received", 0)),
            completed=_int_keys(data.get("completed")),
            in_flight_measured=_int_keys(data.get("in_flight_measured")),
            health_now=data.get("health_now") or {},
            health=_int_keys(data.get("health")),
            lateness=_int_keys(data.get("lateness")),
            warnings=tuple(data.get("warnings") or ()),
            stopped=Stop.from_json(data["stopped"]) if data.get("stopped") else None,
        )


def _str_keys(values: Mapping[int, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in values.items()}


def _int_keys(values: Mapping[str, Any] | None) -> dict[int, Any]:
    return {int(k): v for k, v in (values or {}).items()}
