"""A reasoning model's thinking, counted apart from its answer: recorder, derivation, stage."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmload.core.phases import Phase, Window
from llmload.core.record import RequestRecord, TokenSource
from llmload.core.recorder import ResponseRecorder
from llmload.core.timeouts import Timeouts
from llmload.metrics import derive, wire
from llmload.metrics.aggregate import StageStats
from llmload.results.from_stats import stage_summary

MS = 1_000_000
DONE = b"data: [DONE]\n\n"


def event(delta: dict[str, Any], usage: dict[str, Any] | None = None, finish: str | None = None) -> bytes:
    chunk: dict[str, Any] = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def final_usage(completion: int, reasoning: int | None = None) -> bytes:
    usage: dict[str, Any] = {"prompt_tokens": 7, "completion_tokens": completion}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return b"data: " + orjson.dumps({"choices": [], "usage": usage}) + b"\n\n"


def recorder(stream: bool = True) -> ResponseRecorder:
    record = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", stream, scheduled_ns=0, max_tokens=6)
    rec = ResponseRecorder(record, Timeouts())
    rec.on_sent(0)
    rec.on_headers(1 * MS, 200, {})
    return rec


def think_then_answer(rec: ResponseRecorder, tail: bytes, key: str = "reasoning_content") -> RequestRecord:
    """Two thinking events, then four answer events, 10 ms apart from 50 ms."""
    for i in range(2):
        rec.on_data((50 + 10 * i) * MS, event({key: " hmm"}))
    for i in range(2, 6):
        rec.on_data((50 + 10 * i) * MS, event({"content": " yes"}, finish="length" if i == 5 else None))
    rec.on_data(101 * MS, tail + DONE)
    return rec.finish(102 * MS)


def test_the_servers_reasoning_count_is_taken_when_it_sends_one() -> None:
    r = think_then_answer(recorder(), final_usage(12, reasoning=5))
    assert r.output_tokens == 12 and r.reasoning_tokens == 5 and r.answer_tokens == 7
    assert r.to_json()["reasoning_tokens"] == 5 and r.to_json()["answer_tokens"] == 7


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_without_a_count_the_reasoning_events_take_their_share_of_the_usage(key: str) -> None:
    r = think_then_answer(recorder(), final_usage(12), key)
    assert r.token_source is TokenSource.USAGE and r.reasoning_tokens == 4  # 2 of 6 events of 12


def test_without_usage_each_reasoning_event_is_one_token() -> None:
    r = think_then_answer(recorder(), b"")
    assert r.token_source is TokenSource.ESTIMATED and (r.reasoning_tokens, r.answer_tokens) == (2, 4)


def test_continuous_usage_counts_the_thinking_exactly() -> None:
    rec = recorder()
    rec.on_data(50 * MS, event({"reasoning_content": " a"}, {"completion_tokens": 1}))
    rec.on_data(60 * MS, event({"reasoning_content": " b c"}, {"completion_tokens": 3}))
    rec.on_data(70 * MS, event({"content": " d"}, {"completion_tokens": 4}, finish="stop") + DONE)
    r = rec.finish(71 * MS)
    assert r.token_source is TokenSource.CONTINUOUS and (r.reasoning_tokens, r.answer_tokens) == (3, 1)


def test_a_tool_call_is_not_thinking() -> None:
    rec = recorder()
    rec.on_data(50 * MS, event({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}))
    rec.on_data(60 * MS, final_usage(3) + DONE)
    assert rec.finish(61 * MS).reasoning_tokens == 0


def test_a_whole_answer_takes_the_count_from_its_usage() -> None:
    rec = recorder(stream=False)
    message = {"content": " yes", "reasoning_content": " hmm hmm"}
    usage = {"prompt_tokens": 7, "completion_tokens": 6, "completion_tokens_details": {"reasoning_tokens": 2}}
    body = {"choices": [{"index": 0, "finish_reason": "length", "message": message}], "usage": usage}
    rec.on_data(50 * MS, orjson.dumps(body))
    rec.on_end(51 * MS)
    r = rec.finish(51 * MS)
    assert (r.reasoning_tokens, r.answer_tokens) == (2, 4)


def test_the_stage_splits_thinking_from_answer() -> None:
    r = think_then_answer(recorder(), final_usage(6, reasoning=2))
    assert derive.think_ns(r) == 20 * MS  # TTFOT - TTFT
    assert derive.tpot_reasoning_ns(r) == 10 * MS
    assert derive.tpot_answer_ns(r) == pytest.approx(30 * MS / 3)
    stats = StageStats()
    window = Window(t0_ns=0, t1_ns=10_000 * MS)
    stats.add(r, window)
    merged = wire.decode(StageStats, orjson.loads(orjson.dumps(wire.encode(stats))))
    merged.merge(StageStats())
    args: dict[str, Any] = {"client_health": {}, "client_bound_by": (), "warnings": ()}
    stage = stage_summary(merged, index=0, concurrency=1, duration_s=10.0, **args)
    reasoning = stage.reasoning
    assert reasoning is not None
    assert (reasoning.requests, reasoning.reasoning_tokens, reasoning.answer_tokens) == (1, 2, 4)
    assert reasoning.reasoning_share == pytest.approx(1 / 3)
    assert reasoning.think_ms is not None and reasoning.think_ms.p50 == pytest.approx(20, rel=0.01)
    assert stage.output_tokens_vs_max_tokens == 1.0
    assert stage_summary(StageStats(), index=0, concurrency=1, duration_s=1.0, **args).reasoning is None
