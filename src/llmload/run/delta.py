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

import msgspec

from llmload.core.health import HealthSnapshot
from llmload.core.stop import Stopped, stop_of
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.timeseries import TimeSeries
from llmload.protocol.jsonvalue import (
    JSON,
    JSONObject,
    array,
    integer,
    number,
    obj,
    optional_number,
    optional_string,
)

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

    def to_wire(self) -> dict[str, JSON]:
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
            "sent_measured": _str_keys(self.sent_measured),
            "health_now": dict(self.health_now),
            "health": {str(k): msgspec.to_builtins(v) for k, v in self.health.items()},
            "lateness": _str_keys(self.lateness),
            "warnings": list(self.warnings),
            "stopped": None if self.stopped is None else msgspec.to_builtins(self.stopped),
        }

    @classmethod
    def from_wire(cls, data: JSONObject) -> Delta:
        series, stopped = data.get("timeseries"), data.get("stopped")
        return cls(
            seq=integer(data["seq"], "seq"),
            name=str(data["name"]),
            records_file=str(data["records_file"]),
            final=bool(data.get("final")),
            model=optional_string(data.get("model"), "model"),
            stages={k: StageStats.from_dict(v) for k, v in _objects(data, "stages").items()},
            classic={k: ClassicStats.from_dict(v) for k, v in _objects(data, "classic").items()},
            timeseries=None if series is None else TimeSeries.from_dict(_dict(series, "timeseries")),
            users=integer(data.get("users", 0), "users"),
            in_flight=integer(data.get("in_flight", 0), "in_flight"),
            records=integer(data.get("records", 0), "records"),
            tokens_received=integer(data.get("tokens_received", 0), "tokens_received"),
            completed=_counts(data, "completed"),
            in_flight_measured=_counts(data, "in_flight_measured"),
            sent_measured=_counts(data, "sent_measured"),
            health_now={k: optional_number(v, k) for k, v in obj(data.get("health_now") or {}).items()},
            health={k: msgspec.convert(v, HealthSnapshot) for k, v in _objects(data, "health").items()},
            lateness={
                k: {phase: number(s, phase) for phase, s in v.items()}
                for k, v in _objects(data, "lateness").items()
            },
            warnings=tuple(str(w) for w in array(data.get("warnings") or ())),
            stopped=stop_of(stopped) if stopped else None,
        )


def _str_keys(values: Mapping[int, JSON]) -> dict[str, JSON]:
    return {str(k): v for k, v in values.items()}


def _dict(value: JSON, what: str) -> dict[str, JSON]:
    # the metrics' from_dict take the dicts msgpack decodes to
    if isinstance(value, dict):
        return value
    raise ValueError(f"{what}: expected a JSON object, got {type(value).__name__}")


def _objects(data: JSONObject, key: str) -> dict[int, dict[str, JSON]]:
    """A per-stage map of objects: stage keys are strings on the wire."""
    return {int(k): _dict(v, f"{key}.{k}") for k, v in obj(data.get(key) or {}, key).items()}


def _counts(data: JSONObject, key: str) -> dict[int, int]:
    return {int(k): integer(v, f"{key}.{k}") for k, v in obj(data.get(key) or {}, key).items()}
