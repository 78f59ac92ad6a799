"""Window attribution and merging of per-stage stats."""

from __future__ import annotations

from array import array

from llmload.metrics.aggregate import StageStats
from llmload.phases import Phase, Window
from llmload.record import RequestRecord, TokenSource

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
    assert a.to_dict() == one.to_dict()
    assert StageStats.from_dict(one.to_dict()).to_dict() == one.to_dict()
