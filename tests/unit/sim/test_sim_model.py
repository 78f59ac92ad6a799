"""The performance model: step times and the closed-loop steady state."""

from __future__ import annotations

import pytest

from llmload.sim.model import (
    DEFAULT_PROMPT_TOKENS,
    FixedTiming,
    ModelParams,
    events_per_request,
    fixed_stage_output_tok_per_s,
    mean_running,
    per_stream_decode_tok_per_s,
    stage_output_tok_per_s,
)

MS = 1_000_000


def test_step_time_is_base_plus_batch_plus_prefill() -> None:
    params = ModelParams(10 * MS, MS, 1000, 20_000)
    assert params.step_ns(0, 0) == 10 * MS
    assert params.step_ns(4, 0) == 10 * MS + 4 * MS + 16 * 1000
    assert params.step_ns(4, 100) == params.step_ns(4, 0) + 100 * 20_000


@pytest.mark.parametrize(("n", "k", "events"), [(1, 1, 1), (256, 1, 256), (10, 4, 4), (9, 4, 3), (0, 1, 0)])
def test_events_per_request(n: int, k: int, events: int) -> None:
    assert events_per_request(n, k) == events


def test_default_prompt_is_128_words_plus_the_chat_template() -> None:
    assert DEFAULT_PROMPT_TOKENS == 128 + 3 + 3


def test_single_user_never_waits() -> None:
    params = ModelParams(10 * MS, MS, prefill_per_token_ns=10_000)
    # One request: 256 steps of 11 ms plus one prefill of 134 tokens in the first.
    cycle_ns = 256 * 11 * MS + DEFAULT_PROMPT_TOKENS * 10_000
    assert stage_output_tok_per_s(params, 1) == pytest.approx(256 / (cycle_ns / 1e9))
    assert per_stream_decode_tok_per_s(params, 1) == pytest.approx(1e9 / (11 * MS))


def test_returning_users_wait_one_step() -> None:
    params = ModelParams(10 * MS, MS)
    assert mean_running(params, 8, 100, 32) == pytest.approx(8 * 32 / 33)


def test_caps_queue_the_excess() -> None:
    capped = ModelParams(10 * MS, MS, max_running=16)
    assert mean_running(capped, 128, 100, 256) == 16
    kv = ModelParams(10 * MS, MS, kv_budget_tokens=100 * (134 + 128))
    assert mean_running(kv, 128, 134, 256) == pytest.approx(100)


def test_throughput_grows_then_saturates_without_the_square_term() -> None:
    params = ModelParams(10 * MS, MS // 2)
    values = [stage_output_tok_per_s(params, c) for c in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert values == sorted(values)
    assert values[-1] < 1e9 / (MS // 2)  # below the 1 / per_seq asymptote


def test_speculative_chunks_raise_throughput() -> None:
    plain = ModelParams(10 * MS, MS)
    spec = ModelParams(10 * MS, MS, tokens_per_chunk=3)
    assert stage_output_tok_per_s(spec, 8) > 2.5 * stage_output_tok_per_s(plain, 8)


def test_fixed_timing_throughput() -> None:
    timing = FixedTiming(50 * MS, 20 * MS)
    assert fixed_stage_output_tok_per_s(timing, 2, 11) == pytest.approx(2 * 11 / 0.25)


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError, match="step times"):
        ModelParams(-1, 0)
    with pytest.raises(ValueError, match="max_running"):
        ModelParams(1, 0, max_running=0)
    with pytest.raises(ValueError):
        FixedTiming(0, 0)
    with pytest.raises(ValueError, match="concurrency"):
        mean_running(ModelParams(1, 1), 0, 1, 1)
