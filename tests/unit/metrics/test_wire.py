"""A stage's state on the wire: read back as it was declared, whatever traveled or was left out."""

from __future__ import annotations

import random
from collections import Counter

import msgpack  # type: ignore[import-untyped]
import orjson
import pytest

from llmload.core.phases import Window
from llmload.metrics import wire
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.histogram import LogHistogram
from llmload.metrics.timeseries import TimeSeries
from tests.support.prometheus import synthetic_records


def _folded(n: int = 60) -> tuple[StageStats, TimeSeries]:
    stats, series = StageStats(), TimeSeries()
    for i, r in enumerate(synthetic_records(random.Random(7), n)):
        r.name = ("plan", "act", None)[i % 3]
        stats.add(r, Window(0, 10**12))
        series.add(r, 0, None)
    return stats, series


def test_a_stage_read_back_from_msgpack_or_json_merges_like_the_one_sent() -> None:
    stats, series = _folded()
    for shipped in (
        msgpack.unpackb(msgpack.packb(wire.encode(stats)), strict_map_key=False),
        orjson.loads(orjson.dumps(wire.encode(stats))),
    ):
        back = wire.decode(StageStats, shipped)
        assert wire.encode(back) == wire.encode(stats)
        merged = StageStats()
        merged.merge(back)
        merged.merge(stats)
        assert merged.counts.records == 2 * stats.counts.records
        assert merged.hist["ttft"].count == 2 * stats.hist["ttft"].count > 0
        assert merged.by_name is not None and set(merged.by_name) == {"plan", "act"}
    series_back = wire.decode(TimeSeries, orjson.loads(orjson.dumps(wire.encode(series))))
    assert series_back.tokens == series.tokens and all(isinstance(s, int) for s in series_back.tokens)


def test_a_counter_comes_back_a_counter_so_a_merge_adds() -> None:
    stats, _ = _folded()
    back = wire.decode(StageStats, wire.encode(stats))
    assert isinstance(back.outcomes, Counter) and isinstance(back.attempts, Counter)
    back.merge(wire.decode(StageStats, wire.encode(stats)))
    assert back.outcomes == stats.outcomes + stats.outcomes


def test_an_empty_histogram_travels_as_null_and_comes_back_empty() -> None:
    encoded = wire.encode(StageStats())
    hist = encoded["hist"]
    assert isinstance(hist, dict) and set(hist.values()) == {None}
    back = wire.decode(StageStats, encoded)
    assert back.hist.keys() == StageStats().hist.keys() and all(not h.count for h in back.hist.values())


def test_what_a_message_leaves_out_takes_its_empty_value() -> None:
    stats, _ = _folded()
    encoded = wire.encode(stats)
    hist = encoded["hist"]
    assert isinstance(hist, dict)
    del hist["e2e"]  # an older file, or a histogram added since
    for side in ("server_side", "reasoning", "sessions", "http_phases", "attempts"):
        del encoded[side]
    back = wire.decode(StageStats, encoded)
    assert back.hist["e2e"].count == 0 and back.hist["ttft"].count == stats.hist["ttft"].count
    assert back.reasoning.requests == 0 and not back.attempts
    back.merge(stats)  # every name the merge reads is there
    assert back.hist["e2e"].count == stats.hist["e2e"].count


def test_the_compact_forms_are_the_accumulators_own() -> None:
    h = LogHistogram()
    for v in (1, 10, 100, 10**6):
        h.add(v)
    assert wire.decode(LogHistogram, wire.encode({"h": h})["h"]) == h
    classic = ClassicStats()
    for r in synthetic_records(random.Random(3), 20):
        classic.add(r)
    assert wire.decode(ClassicStats, classic.to_dict()) == classic


def test_a_malformed_message_is_a_value_error_that_names_where() -> None:
    encoded = wire.encode(StageStats())
    encoded["counts"] = {"records_measure": "many"}
    with pytest.raises(ValueError, match="records_measure"):
        wire.decode(StageStats, encoded)
