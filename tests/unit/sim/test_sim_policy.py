"""Fault selection, metrics exposition and ground-truth summaries."""

from __future__ import annotations

from collections import deque

import pytest

from llmload.sim.faults import FaultMode, FaultPolicy, parse_modes
from llmload.sim.metrics import render_metrics
from llmload.sim.prefix_cache import PrefixCacheStats
from llmload.sim.truth import Truth, summarize


def test_parse_modes() -> None:
    assert parse_modes("refuse, slow_drip") == (FaultMode.REFUSE, FaultMode.SLOW_DRIP)
    with pytest.raises(ValueError, match="unknown fault mode 'x'"):
        parse_modes("refuse,x")


def test_policy_is_deterministic_and_follows_the_rate() -> None:
    policy = FaultPolicy((FaultMode.HTTP_500, FaultMode.RESET), 0.3, seed=9)
    draws = [policy.draw(i) for i in range(2000)]
    assert draws == [policy.draw(i) for i in range(2000)]
    faulted = [d for d in draws if d is not None]
    assert 0.25 < len(faulted) / len(draws) < 0.35
    assert set(faulted) == {FaultMode.HTTP_500, FaultMode.RESET}
    assert FaultPolicy().draw(1) is None
    assert all(FaultPolicy((FaultMode.REFUSE,), 1.0).draw(i) is FaultMode.REFUSE for i in range(50))


def _values(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_metrics_exposition() -> None:
    truth = Truth()
    entry = truth.begin(id="a", client="c", path="/p", stream=True, arrival_ns=0)
    truth.first_token(entry, 30_000_000)
    truth.tokens_written_total = 7
    cache = PrefixCacheStats(queries=320, hits=64)
    text = render_metrics(
        truth, model='m"x', running=2, waiting=1, kv_usage=0.5, speculative=False, engine="vllm", cache=cache
    )
    values = _values(text.decode())
    labels = 'engine="0",model_name="m\\"x"'
    assert values[f"vllm:num_requests_running{{{labels}}}"] == 2
    assert values[f"vllm:kv_cache_usage_perc{{{labels}}}"] == 0.5
    assert values[f"vllm:generation_tokens_total{{{labels}}}"] == 7
    assert values[f'vllm:time_to_first_token_seconds_bucket{{{labels},le="0.02"}}'] == 0
    assert values[f'vllm:time_to_first_token_seconds_bucket{{{labels},le="0.04"}}'] == 1
    assert values[f"vllm:time_to_first_token_seconds_sum{{{labels}}}"] == pytest.approx(0.03)
    assert values[f"vllm:prefix_cache_queries_total{{{labels}}}"] == 320
    assert values[f"vllm:prefix_cache_hits_total{{{labels}}}"] == 64
    assert "spec_decode" not in text.decode() and "sglang:" not in text.decode()
    spec = render_metrics(
        truth, model="m", running=0, waiting=0, kv_usage=0, speculative=True, engine="vllm", cache=cache
    )
    assert b"vllm:spec_decode_num_accepted_tokens_total" in spec


def test_sglang_profiles_export_the_cache_as_sglang_does() -> None:
    cache = PrefixCacheStats(queries=320, hits=64, batch_hit_rate=0.75)
    text = render_metrics(
        Truth(), model="m", running=0, waiting=0, kv_usage=0, speculative=False, engine="sglang", cache=cache
    ).decode()
    assert _values(text)['sglang:cache_hit_rate{model_name="m"}'] == 0.75
    assert "# TYPE sglang:cache_hit_rate gauge" in text
    assert "prefix_cache_queries" not in text and "vllm:num_requests_running" in text


def test_summaries_and_entries() -> None:
    assert summarize(deque(range(1, 101))) == {
        "count": 100,
        "p50_ns": 50,
        "p99_ns": 99,
        "max_ns": 100,
        "mean_ns": 50,
    }
    assert summarize(deque())["count"] == 0
    truth = Truth()
    late = truth.begin(id="b", client="c", path="/p", stream=False, arrival_ns=5)
    early = truth.begin(id="a", client="c", path="/p", stream=False, arrival_ns=1)
    truth.finish(early, "rejected")
    truth.finish(late)
    truth.finish(late, "cancelled")  # once only
    assert [e["id"] for e in truth.requests()] == ["b", "a"]
    assert [e["outcome"] for e in truth.requests()] == ["ok", "rejected"]
