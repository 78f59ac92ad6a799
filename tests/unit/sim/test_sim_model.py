"""The performance model: step times and the closed-loop steady state."""

from __future__ import annotations

import pytest

from llmload.sim.model import (
    DEFAULT_PROMPT_TOKENS,
    FixedTiming,
    ModelParams,
    Speculation,
    events_per_request,
    fixed_stage_output_tok_per_s,
    mean_running,
    per_stream_decode_tok_per_s,
    stage_output_tok_per_s,
    steps_per_request,
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


def test_a_drafter_emits_its_expected_tokens_per_step() -> None:
    spec = Speculation(draft_tokens=3, acceptance=0.7, draft_ns=MS)
    odds = spec.token_odds()
    assert sum(odds) == pytest.approx(1.0)
    assert sum((1 + j) * p for j, p in enumerate(odds)) == pytest.approx(spec.mean_tokens_per_step)
    assert spec.mean_tokens_per_step == pytest.approx(1 + 0.7 + 0.49 + 0.343)
    # no acceptance: one token a step, as without a drafter
    none = ModelParams(10 * MS, MS, speculation=Speculation(3, 0.0, MS))
    assert steps_per_request(none, 256) == pytest.approx(events_per_request(256, 1))
    # a long request: its steps are its tokens after the first over the mean, plus the first
    params = ModelParams(10 * MS, MS, speculation=spec)
    assert steps_per_request(params, 2001) == pytest.approx(1 + 2000 / spec.mean_tokens_per_step, rel=0.002)


def test_a_drafter_costs_its_passes_and_its_verification() -> None:
    spec = Speculation(draft_tokens=3, acceptance=0.7, draft_ns=MS, verify_cost=0.5)
    params = ModelParams(10 * MS, MS, 0, 20_000, speculation=spec)
    assert params.step_ns(4, 100) == 10 * MS + 3 * MS + 4 * MS * (1 + 3 * 0.5) + 100 * 20_000
    assert params.max_tokens_per_step == 4
    with pytest.raises(ValueError, match="tokens_per_chunk"):
        ModelParams(10 * MS, MS, tokens_per_chunk=2, speculation=spec)
    with pytest.raises(ValueError, match="acceptance"):
        Speculation(3, 1.0, MS)


def test_speculation_helps_one_stream_and_costs_a_full_batch() -> None:
    plain = ModelParams(10 * MS, MS // 2)
    spec = ModelParams(10 * MS, MS // 2, speculation=Speculation(3, 0.7, MS // 2, 0.75))
    ratio = {c: stage_output_tok_per_s(spec, c) / stage_output_tok_per_s(plain, c) for c in (1, 8, 128)}
    assert ratio[1] > 1.8
    assert ratio[1] > ratio[8] > ratio[128]
    assert ratio[128] < 1.0
