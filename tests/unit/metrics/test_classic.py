"""Exact classic buckets: counts equal an independent recount, merge is exact, shipping is compact."""

from __future__ import annotations

import json
import random
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.metrics.classic import (
    BY_KEY,
    FINE_NS,
    SPECS,
    TOKENS,
    VLLM_E2E_NS,
    VLLM_ITL_NS,
    VLLM_TTFT_NS,
    ClassicStats,
    one_two_five,
)
from tests.support.prometheus import MS, recount, synthetic_records


def stats_of(records: list[RequestRecord]) -> ClassicStats:
    stats = ClassicStats()
    for r in records:
        stats.add(r)
    return stats


def test_bound_lists_are_vllms_and_one_two_five() -> None:
    # vllm/v1/metrics/loggers.py, copied exactly: an overlay is only fair with the same bounds.
    assert [b / 1e9 for b in VLLM_TTFT_NS] == [
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
        20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]  # fmt: skip
    assert [b / 1e9 for b in VLLM_ITL_NS] == [
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
        20.0, 40.0, 80.0]  # fmt: skip
    assert [b / 1e9 for b in VLLM_E2E_NS] == [
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
        240.0, 480.0, 960.0, 1920.0, 7680.0]  # fmt: skip
    assert FINE_NS[:4] == (100_000, 200_000, 500_000, 1_000_000) and FINE_NS[-1] == 100 * 10**9
    assert len(FINE_NS) == 19 and TOKENS[:7] == (1, 2, 5, 10, 20, 50, 100)
    assert one_two_five(1, 100) == (1, 2, 5, 10, 20, 50, 100)  # vLLM's build_1_2_5_buckets(100)
    for spec in SPECS:
        assert list(spec.bounds) == sorted(set(spec.bounds)), spec.key


def test_counts_equal_an_independent_recount() -> None:
    records = synthetic_records(random.Random(1), 300)
    stats = stats_of(records)
    for spec in SPECS:
        les = [b / 1e9 if spec.seconds else b for b in spec.bounds]
        assert stats.cumulative(spec.key) == recount(records, spec.source, les, spec.seconds), spec.key


def test_boundary_samples_count_at_or_below_their_le() -> None:
    r = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=0, sent_ns=0)
    # Reads exactly 10 ms and 25 ms apart: two of vLLM's ITL bounds, hit exactly.
    r.event_ns, r.event_tokens = array("q", [20 * MS, 30 * MS, 55 * MS]), array("l", [1, 1, 1])
    r.first_token_ns, r.first_output_ns, r.last_token_ns, r.done_ns = 20 * MS, 20 * MS, 55 * MS, 55 * MS
    r.output_tokens = 3
    stats = stats_of([r])
    itl = stats.cumulative("itl")
    assert itl[0] == 1 and itl[1] == 2  # le=0.01 holds the 10 ms gap, le=0.025 both
    assert stats.cumulative("ttft")[3] == 1 and stats.cumulative("ttft")[2] == 0  # 20 ms: le=0.02


def test_failed_requests_count_in_counters_never_in_latencies() -> None:
    records = synthetic_records(random.Random(2), 200)
    stats = stats_of(records)
    ok = [r for r in records if r.ok]
    assert stats.outcomes["ok"] == len(ok) and sum(stats.outcomes.values()) == len(records)
    assert stats.cumulative("ttft")[-1] == len(ok) < len(records)
    assert stats.generation_tokens_total == sum(r.output_tokens for r in records)
    assert stats.prompt_tokens_total == sum(r.prompt_tokens or 0 for r in records)
    # One ITL sample per token after the first read, so ITL's count is token-weighted.
    assert stats.cumulative("itl")[-1] == sum(
        r.output_tokens
        - sum(t for s, t in zip(r.event_ns, r.event_tokens, strict=True) if s == r.event_ns[0])
        for r in ok
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 60))
def test_merge_is_exact_in_any_order(seed: int, n_a: int, n_b: int) -> None:
    rng = random.Random(seed)
    a, b = synthetic_records(rng, n_a), synthetic_records(rng, n_b)
    left, right = stats_of(a), stats_of(b)
    left.merge(right)
    assert left == stats_of(a + b)
    other = stats_of(b)
    other.merge(stats_of(a))
    assert other == left


def test_shipping_round_trip_is_exact_and_compact() -> None:
    stats = stats_of(synthetic_records(random.Random(3), 500))
    shipped = json.loads(json.dumps(stats.to_dict()))
    back = ClassicStats.from_dict(shipped)
    assert back == stats and back.to_dict() == stats.to_dict()
    back.add(synthetic_records(random.Random(4), 1)[0])  # still live after from_dict
    assert back != stats
    assert len(json.dumps(stats.to_dict())) < 3000
    assert ClassicStats.from_dict(ClassicStats().to_dict()) == ClassicStats()
    assert json.dumps(ClassicStats().to_dict()) == (
        '{"layout": 1, "h": {}, "s": {}, "o": {}, "pt": 0, "gt": 0}'
    )


def test_other_layouts_are_refused() -> None:
    d = ClassicStats().to_dict()
    with pytest.raises(ValueError, match="layout"):
        ClassicStats.from_dict({**d, "layout": 0})
    with pytest.raises(ValueError, match="bucket counts"):
        ClassicStats.from_dict({**d, "h": {"ttft": [0] * (len(BY_KEY["ttft"].bounds) + 2)}})
