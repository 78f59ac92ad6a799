"""The worker → master message: its wire form round-trips to the same stats and state."""

from __future__ import annotations

import random

import msgpack  # type: ignore[import-untyped]

from llmload.core.health import HealthSnapshot
from llmload.core.phases import Window
from llmload.core.stop import stop_of
from llmload.metrics import wire
from llmload.metrics.aggregate import StageStats
from llmload.metrics.timeseries import TimeSeries
from llmload.run.delta import Delta
from tests.support.prometheus import synthetic_records


def test_a_delta_survives_the_wire_with_int_stages_and_the_same_stats() -> None:
    stats = StageStats()
    for r in synthetic_records(random.Random(4), 50):
        stats.add(r, Window(0, 10**12))
    assert sum(stats.outcomes.values()) > 0
    series = TimeSeries()
    sent = Delta(
        seq=3,
        name="worker-1",
        records_file="requests.worker-1.jsonl",
        final=True,
        model="m",
        stages={2: stats},
        timeseries=series,
        users=8,
        in_flight=5,
        records=50,
        tokens_received=900,
        completed={2: 40},
        in_flight_measured={2: 3},
        health={2: HealthSnapshot(loop_lag_p99_ms=1.5)},
        lateness={2: {"measure": 0.001}},
        warnings=("w",),
        stopped=stop_of({"by": "interrupt"}),
    )
    shipped = msgpack.unpackb(msgpack.packb(wire.encode(sent)), strict_map_key=False)  # as Locust sends it
    assert all(isinstance(k, str) for k in shipped["stages"])
    got = wire.decode(Delta, shipped)
    assert wire.encode(got.stages[2]) == wire.encode(stats)
    assert (got.completed, got.in_flight_measured, got.health, got.lateness) == (
        {2: 40},
        {2: 3},
        {2: HealthSnapshot(loop_lag_p99_ms=1.5)},
        {2: {"measure": 0.001}},
    )
    assert wire.encode(got) == wire.encode(sent)


def test_an_older_workers_message_without_the_later_keys_still_merges() -> None:
    got = wire.decode(
        Delta, {"seq": 0, "name": "w", "records_file": "r.jsonl", "stages": {}, "completed": {"0": 1}}
    )
    assert got.timeseries is None and got.classic == {} and got.warnings == ()
    assert got.completed == {0: 1} and got.stopped is None
