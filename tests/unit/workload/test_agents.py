"""The agent scenario's pure part: its options' checks, the history a turn sends, the tool's
latency draws and a session's account."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.workload.agents import (
    TOOL_RESULT_PREFIX,
    AgentSpec,
    SessionAccount,
    joined_results,
    next_history,
)


@pytest.mark.parametrize(
    ("field", "value", "flag"),
    [
        ("tool_result_tokens", 0, "--tool-result-tokens"),
        ("tool_latency_ms", -1.0, "--tool-latency-ms"),
        ("tool_latency_ms", float("nan"), "--tool-latency-ms"),
        ("fan_out", 65, "--fan-out"),
        ("fan_out", True, "--fan-out"),
        ("fan_out_at", 0, "--fan-out-at"),
        ("sub_turns", 0, "--sub-agent-turns"),
    ],
)
def test_a_wrong_value_names_its_flag(field: str, value: object, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        AgentSpec(**{field: value})  # type: ignore[arg-type]


def test_the_next_turn_is_the_history_then_the_reply_as_written_then_the_tool_result() -> None:
    first = ({"role": "user", "content": "plan the trip"},)
    history = next_history(first, "  I will look it up.\n", "42 results")
    assert history == (
        *first,
        {"role": "assistant", "content": "  I will look it up.\n"},
        {"role": "user", "content": TOOL_RESULT_PREFIX + "42 results"},
    )
    assert next_history(history, "done", "ok")[:3] == history  # the earlier turns resend unchanged


def test_sub_agents_answers_join_in_their_order() -> None:
    assert joined_results(["a", "b"]) == "[sub-agent 1]\na\n\n[sub-agent 2]\nb"


def test_sub_agents_run_after_their_turn_and_never_after_the_last() -> None:
    spec = AgentSpec(fan_out=2, fan_out_at=3)
    assert [t for t in range(1, 6) if spec.fans_out_after(t, 5)] == [3]
    assert not spec.fans_out_after(3, 3)
    assert not AgentSpec(fan_out=0, fan_out_at=3).fans_out_after(3, 5)


def test_tool_latency_is_seeded_and_spread_over_half_to_one_and_a_half_of_the_mean() -> None:
    spec = AgentSpec(tool_latency_ms=200)
    draws = [spec.tool_latency_s(7, user, request) for user in range(20) for request in range(20)]
    assert draws == [spec.tool_latency_s(7, user, request) for user in range(20) for request in range(20)]
    assert all(0.1 <= d < 0.3 for d in draws)
    assert 0.18 < sum(draws) / len(draws) < 0.22
    assert AgentSpec().tool_latency_s(7, 0, 0) == 0.0


def test_a_sessions_account_counts_every_request_and_its_own_turns() -> None:
    s = SessionAccount(stage=0, measured=True, started_ns=1_000)
    s.add(own_turn=True, ttft_ns=50, output_tokens=10, prompt_tokens=100, cached_tokens=None)
    s.add(own_turn=False, ttft_ns=900, output_tokens=5, prompt_tokens=60, cached_tokens=32)
    s.add(own_turn=True, ttft_ns=70, output_tokens=10, prompt_tokens=200, cached_tokens=96)
    s.end("completed", 5_000)
    assert (s.turns, s.requests, s.output_tokens, s.prompt_tokens) == (2, 3, 25, 360)
    assert s.worst_ttft_ns == 70  # of its own turns: a sub-agent's slow start is its own
    assert s.cache_hit_rate == 128 / 260  # over the requests whose usage had a cache count
    assert s.duration_ns == 4_000
