"""Window attribution and merging of per-stage stats."""

from __future__ import annotations

from array import array

import pytest

from llmload.core.phases import Phase, Window
from llmload.core.record import RequestRecord, ServerMetrics, ServerTimings, TokenSource
from llmload.metrics import derive, wire
from llmload.metrics.aggregate import StageStats
from llmload.metrics.http_phases import HttpPhases, phases_ns
from llmload.metrics.slo import parse_slo

MS = 1_000_000


def record(sent: int, stamps: list[int], phase: Phase = Phase.MEASURE) -> RequestRecord:
    r = RequestRecord("r", "u", 0, phase, "chat", True, scheduled_ns=sent, sent_ns=sent)
    r.event_ns = array("q", stamps)
    r.event_tokens = array("l", [1] * len(stamps))
    r.first_token_ns, r.last_token_ns, r.done_ns = stamps[0], stamps[-1], stamps[-1]
    r.output_tokens, r.token_source = len(stamps), TokenSource.USAGE
    return r


def test_straddling_requests_contribute_only_tokens_inside_the_window() -> None:
    w = Window(t0_ns=100 * MS, t1_ns=200 * MS)
    stats = StageStats()
    stats.add(record(0, [50 * MS, 90 * MS, 110 * MS], Phase.WARMUP), w)  # 1 token inside
    stats.add(record(150 * MS, [190 * MS, 200 * MS, 210 * MS]), w)  # 1 inside (end excluded)
    assert stats.counts.window_output_tokens == 2
    # Only the request sent in the window enters latency histograms.
    assert stats.hist["ttft"].count == 1 and stats.counts.records_warmup == 1
    # Completed inside the window: the warm-up request (done at 110 ms), not the other (210 ms).
    assert stats.counts.window_completed == 1


def test_open_window_counts_everything_after_t0() -> None:
    w = Window(t0_ns=100 * MS)
    stats = StageStats()
    stats.add(record(120 * MS, [130 * MS, 140 * MS]), w)
    assert stats.counts.window_output_tokens == 2


def test_merge_equals_adding_everything_to_one() -> None:
    w = Window(t0_ns=0)
    recs = [record(i * MS, [(i + 50) * MS, (i + 70) * MS, (i + 91) * MS]) for i in range(20)]
    one, a, b = StageStats(), StageStats(), StageStats()
    for i, r in enumerate(recs):
        one.add(r, w)
        (a if i % 2 else b).add(r, w)
    a.merge(b)
    assert wire.encode(a) == wire.encode(one)
    assert wire.encode(wire.decode(StageStats, wire.encode(one))) == wire.encode(one)


def named(name: str | None, sent: int, phase: Phase = Phase.MEASURE) -> RequestRecord:
    r = record(sent, [sent + 10 * MS, sent + 30 * MS], phase)
    r.name = name
    return r


def test_named_requests_are_also_counted_per_name() -> None:
    w = Window(t0_ns=100 * MS, t1_ns=1000 * MS)
    stats = StageStats()
    for r in (
        named("rag", 0, Phase.WARMUP),
        named("rag", 200 * MS),
        named("chat", 300 * MS),
        named(None, 400 * MS),
    ):
        stats.add(r, w, slo=() if r.name == "rag" else None)  # no objective: every ok request met it
    stats.add_late(named("chat", 500 * MS), w)
    assert stats.by_name is not None and set(stats.by_name) == {"rag", "chat"}
    rag, chat = stats.by_name["rag"], stats.by_name["chat"]
    assert (rag.counts.records_warmup, rag.counts.records_measure, rag.hist["ttft"].count) == (1, 1, 1)
    assert rag.counts.slo_met == 1 and rag.by_name is None  # one level deep
    assert dict(chat.outcomes) == {"ok": 1, "unfinished": 1}
    # The stage's own totals count every request, named or not.
    assert stats.counts.records == 5 and stats.hist["ttft"].count == 3


def test_per_name_stats_merge_and_travel_exactly() -> None:
    w = Window(t0_ns=0)
    recs = [named(("a", "b", None)[i % 3], i * MS) for i in range(30)]
    one, a, b = StageStats(), StageStats(), StageStats()
    for i, r in enumerate(recs):
        one.add(r, w)
        (a if i % 2 else b).add(r, w)
    a.merge(b)
    assert wire.encode(a) == wire.encode(one)
    back = wire.decode(StageStats, wire.encode(one))
    assert wire.encode(back) == wire.encode(one) and back.by_name is not None
    assert back.by_name["a"].by_name is None


def test_unnamed_requests_cost_no_breakdown() -> None:
    stats = StageStats()
    stats.add(named(None, 0), Window(t0_ns=0))
    assert stats.by_name == {} and wire.encode(stats)["by_name"] == {}


def test_server_timings_join_the_client_per_request() -> None:
    r = record(0, [50 * MS, 60 * MS, 70 * MS, 80 * MS])  # TTFT 50 ms, 30 ms from first to last
    r.server_timings = ServerTimings(prompt_ms=40.0, predicted_ms=31.0, prompt_n=10, predicted_n=4, cache_n=3)
    stats = StageStats()
    stats.add(r, Window(t0_ns=0))
    side = stats.server_side
    assert (side.requests, side.cache_n) == (1, 3)
    assert side.ttft_minus_prefill.quantiles([0.5]) == [pytest.approx(10 * MS, rel=0.01)]
    assert side.decode_minus_predicted.quantiles([0.5]) == [pytest.approx(-1 * MS, rel=0.01)]
    assert side.tpot_minus_server.quantiles([0.5]) == [pytest.approx(-MS / 3, rel=0.01)]  # 10 vs 31/3
    back = wire.decode(StageStats, wire.encode(stats))
    assert wire.encode(back.server_side) == wire.encode(side)
    # Where the server gave no timings, its histograms go as nothing at all.
    empty = wire.encode(StageStats())["server_side"]
    assert isinstance(empty, dict) and not any(empty.values())


def test_vllms_metrics_join_the_client_per_request() -> None:
    # client: TTFT 50 ms, then 3 tokens 10 ms apart (TPOT 10 ms); vLLM: 30 ms queued, 15 ms to
    # its first token from the scheduling, 29 ms first to last, mean ITL 9.5 ms
    r = record(0, [50 * MS, 60 * MS, 70 * MS, 80 * MS])
    r.server_metrics = ServerMetrics(ttft_ms=15.0, queue_ms=30.0, generation_ms=29.0, mean_itl_ms=9.5,
                                     tokens_per_second=90.0)  # fmt: skip
    r.asked_server_timings = True
    stats = StageStats()
    stats.add(r, Window(t0_ns=0))
    side = stats.server_side
    assert (side.asked, side.metrics_requests, side.requests) == (1, 1, 0)
    assert side.ttft_outside_engine.quantiles([0.5]) == [pytest.approx(5 * MS, rel=0.01)]
    assert side.tpot_minus_engine_itl.quantiles([0.5]) == [pytest.approx(0.5 * MS, rel=0.01)]
    assert side.decode_minus_generation.quantiles([0.5]) == [pytest.approx(1 * MS, rel=0.01)]
    assert side.queue_ns_total / side.ttft_ns_total == pytest.approx(30 / 50)
    back = wire.decode(StageStats, wire.encode(stats))
    assert wire.encode(back.server_side) == wire.encode(side)
    merged = StageStats()
    merged.merge(stats)
    merged.merge(back)
    assert merged.server_side.metrics_requests == 2 and merged.server_side.engine_queue.count == 2


def test_a_servers_negative_queue_time_counts_as_none() -> None:
    # A queue time below zero (clocks stamped apart) is nil queueing, in the share as in the
    # histogram, so the queue's share of TTFT is never negative.
    r = record(0, [50 * MS, 60 * MS])
    r.server_metrics = ServerMetrics(ttft_ms=15.0, queue_ms=-0.5, generation_ms=10.0, mean_itl_ms=10.0,
                                     tokens_per_second=90.0)  # fmt: skip
    stats = StageStats()
    stats.add(r, Window(t0_ns=0))
    side = stats.server_side
    assert side.queue_ns_total == 0 and side.ttft_ns_total == 50 * MS
    assert side.ttft_outside_engine.quantiles([0.5]) == [pytest.approx(35 * MS, rel=0.01)]


def test_http_phases_partition_the_time_to_the_first_token() -> None:
    r = record(10 * MS, [50 * MS, 60 * MS])
    r.began_ns, r.connect_start_ns, r.tls_start_ns, r.connected_ns = 1 * MS, 2 * MS, 4 * MS, 8 * MS
    r.written_ns, r.first_byte_ns = 11 * MS, 20 * MS
    assert phases_ns(r) == (1 * MS, 2 * MS, 4 * MS, 1 * MS, 9 * MS, 30 * MS)
    assert sum(phases_ns(r)[3:]) == derive.ttft_ns(r)
    reused = record(10 * MS, [50 * MS])
    reused.began_ns = 9 * MS
    assert phases_ns(reused) == (1 * MS, None, None, None, None, None)  # nothing else was seen
    stats = StageStats()
    stats.add(r, Window(t0_ns=0))
    stats.add(reused, Window(t0_ns=0))
    p = stats.http_phases
    assert (p.requests, p.new_connections, p.hist["tls"].count, p.hist["pool_wait"].count) == (2, 1, 1, 2)
    assert wire.encode(wire.decode(HttpPhases, wire.encode(p))) == wire.encode(p)


def test_the_stage_judges_each_measured_ok_request_by_the_objectives_it_is_given() -> None:
    w = Window(t0_ns=0, t1_ns=10**12)
    slo = parse_slo("ttft_p99_ms<=80")  # each request's own TTFT against 80 ms
    stats = StageStats()
    stats.add(record(0, [50 * MS, 60 * MS]), w, slo)  # TTFT 50 ms: met
    stats.add(record(0, [90 * MS, 95 * MS]), w, slo)  # 90 ms: missed
    stats.add(record(0, [10 * MS, 20 * MS], Phase.WARMUP), w, slo)  # not measured: not judged
    stats.add(record(0, [10 * MS, 20 * MS]), w)  # no objectives given: not judged
    assert (stats.counts.slo_met, stats.hist["ttft"].count) == (1, 3)
