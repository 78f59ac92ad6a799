"""The recorder turns reads into records exactly as docs/metrics.md defines them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.core.phases import Phase, Window
from llmload.core.record import RequestRecord, TokenSource
from llmload.core.recorder import ResponseRecorder
from llmload.core.timeouts import Timeouts
from llmload.errors import ErrorKind
from llmload.metrics import derive
from llmload.metrics.aggregate import StageStats

MS = 1_000_000


def event(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def delta(content: str, *, usage: int | None = None, finish: str | None = None) -> bytes:
    chunk: dict[str, Any] = {
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]
    }
    if usage is not None:
        chunk["usage"] = {"prompt_tokens": 7, "completion_tokens": usage}
    return event(chunk)


ROLE = event({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
USAGE = event({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 10}})
DONE = b"data: [DONE]\n\n"


def recorder(stream: bool = True, timeouts: Timeouts | None = None) -> ResponseRecorder:
    record = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", stream, scheduled_ns=0)
    rec = ResponseRecorder(record, timeouts or Timeouts())
    rec.on_sent(0)
    rec.on_headers(1 * MS, 200, {})
    return rec


def test_final_usage_spread_over_events_and_ttft_from_first_token_bearing_read() -> None:
    rec = recorder()
    rec.on_data(40 * MS, ROLE)  # role-only: not a token
    rec.on_data(50 * MS, delta("a"))
    for i in range(1, 5):
        rec.on_data((50 + 20 * i) * MS, delta(" b"))
    assert rec.on_data(131 * MS, delta("", finish="length") + USAGE + DONE) is True
    r = rec.finish(132 * MS)
    assert r.outcome == "ok" and r.token_source is TokenSource.USAGE
    assert r.output_tokens == 10 and sum(r.event_tokens) == 10
    assert derive.ttft_ns(r) == 50 * MS
    assert derive.e2e_ns(r) == 131 * MS
    assert derive.tpot_ns(r) == pytest.approx(80 * MS / 9)
    assert r.finish_reason == "length" and r.prompt_tokens == 7


def test_continuous_usage_gives_exact_tokens_per_event_and_per_token_itl() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a", usage=1))
    rec.on_data(70 * MS, delta(" b c d", usage=4))
    rec.on_data(90 * MS, delta(" e f g", usage=7, finish="length") + DONE)
    r = rec.finish(91 * MS)
    assert r.token_source is TokenSource.CONTINUOUS
    assert list(r.event_tokens) == [1, 3, 3]
    assert list(derive.itl_samples(r)) == [(20 * MS // 3, 3), (20 * MS // 3, 3)]
    assert list(derive.chunk_gaps(r)) == [20 * MS, 20 * MS]


def test_events_completed_by_one_read_share_its_stamp() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a", usage=1) + delta("b", usage=2) + delta("c", usage=3))
    rec.on_data(60 * MS, delta("d", usage=4, finish="stop") + DONE)
    r = rec.finish(61 * MS)
    assert list(derive.reads(r)) == [(50 * MS, 3, 3), (60 * MS, 1, 1)]
    # ITL: the second read's gap over its one token; the first read's extra tokens get none.
    assert list(derive.itl_samples(r)) == [(10 * MS, 1)]


def test_no_usage_counts_one_token_per_event_marked_estimated() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a"))
    rec.on_data(60 * MS, delta("b", finish="stop") + DONE)
    r = rec.finish(61 * MS)
    assert r.token_source is TokenSource.ESTIMATED and r.output_tokens == 2


def test_non_streaming_has_e2e_and_usage_but_no_ttft() -> None:
    rec = recorder(stream=False)
    body = {
        "choices": [{"message": {"role": "assistant", "content": "x y"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    }
    rec.on_data(300 * MS, orjson.dumps(body))
    rec.on_end(300 * MS)
    r = rec.finish(301 * MS)
    assert r.outcome == "ok" and r.output_tokens == 2 and r.token_source is TokenSource.USAGE
    assert derive.ttft_ns(r) is None and derive.e2e_ns(r) == 300 * MS


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, ErrorKind.HTTP_429), (404, ErrorKind.HTTP_4XX), (503, ErrorKind.HTTP_5XX)],
)
def test_error_status_keeps_evidence(status: int, kind: ErrorKind) -> None:
    record = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=0)
    rec = ResponseRecorder(record, Timeouts())
    rec.on_sent(0)
    rec.on_headers(MS, status, {"retry-after": "3"} if status == 429 else {})
    rec.on_data(2 * MS, b'{"error": {"message": "slow down"}}')
    rec.on_end(2 * MS)
    r = rec.finish(2 * MS)
    assert r.outcome == kind.value
    assert r.error_detail is not None and "slow down" in r.error_detail
    if status == 429:
        assert "retry-after: 3" in r.error_detail


def test_error_object_inside_stream_is_an_error_event() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a"))
    assert rec.on_data(60 * MS, event({"error": {"message": "boom", "code": 500}})) is True
    assert rec.finish(61 * MS).outcome == ErrorKind.ERROR_EVENT.value


def test_invalid_json_is_bad_payload() -> None:
    rec = recorder()
    assert rec.on_data(50 * MS, b"data: {not json\n\n") is True
    assert rec.finish(51 * MS).outcome == ErrorKind.BAD_PAYLOAD.value


def test_clean_end_without_done_or_finish_reason_is_stream_broken() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a"))
    rec.on_end(60 * MS)
    assert rec.finish(61 * MS).outcome == ErrorKind.STREAM_BROKEN.value


def test_timeouts_are_classified_by_the_deadline_that_bound() -> None:
    t = Timeouts(first_token_s=1.0, stall_s=0.5, total_s=10.0)
    rec = recorder(timeouts=t)
    assert rec.read_deadline_ns() == 1_000 * MS
    rec.fail(1_000 * MS, ErrorKind.STALL_TIMEOUT, "timed out")
    assert rec.record.outcome == ErrorKind.FIRST_TOKEN_TIMEOUT.value

    rec = recorder(timeouts=t)
    rec.on_data(50 * MS, delta("a"))
    assert rec.read_deadline_ns() == 550 * MS
    rec.fail(550 * MS, ErrorKind.STALL_TIMEOUT, "timed out")
    assert rec.record.outcome == ErrorKind.STALL_TIMEOUT.value


def test_unfinished_keeps_tokens_but_enters_no_latency() -> None:
    rec = recorder()
    rec.on_data(50 * MS, delta("a", usage=1))
    rec.on_data(70 * MS, delta("b", usage=2))
    r = rec.unfinished(80 * MS)
    assert r.outcome == "unfinished" and r.output_tokens == 2
    stats = StageStats()
    stats.add(r, Window(t0_ns=60 * MS, t1_ns=75 * MS))
    assert stats.counts.window_output_tokens == 1  # only the read inside the window
    assert stats.hist["ttft"].count == 0 and stats.outcomes["unfinished"] == 1


LLAMACPP_STREAM = (
    Path(__file__).resolve().parents[2] / "fixtures" / "servers" / "llamacpp_stream.sse"
).read_bytes()


def test_a_servers_own_timings_are_kept_beside_the_clients() -> None:
    # Captured from llama-server: four tokens, then usage with its ``timings``.
    rec = recorder()
    for i, line in enumerate(LLAMACPP_STREAM.split(b"\n\n")):
        if line.strip():
            rec.on_data(10 * MS * (i + 1), line + b"\n\n")
    rec.on_end(100 * MS)
    record = rec.finish(100 * MS)
    assert record.ok and record.output_tokens == 4
    t = record.server_timings
    assert t is not None and (t.prompt_n, t.predicted_n) == (record.prompt_tokens - (t.cache_n or 0), 4)
    assert t.prompt_ms > 0 and t.predicted_ms > 0
    assert orjson.loads(orjson.dumps(record.to_json()))["server_timings"]["predicted_n"] == 4


def test_timings_of_the_wrong_shape_are_not_kept() -> None:
    rec = recorder()
    rec.on_data(
        MS,
        delta("a", finish="stop")
        + event({"choices": [], "usage": {"completion_tokens": 1}, "timings": {"prompt_ms": "x"}}),
    )
    rec.on_data(2 * MS, DONE)
    assert rec.finish(3 * MS).server_timings is None


def test_vllms_per_request_metrics_are_read_from_the_final_usage_and_the_body() -> None:
    metrics = {"time_to_first_token_ms": 12.5, "queue_time_ms": 3.0, "generation_time_ms": 40.0,
               "mean_itl_ms": 10.0, "tokens_per_second": 88.0}  # fmt: skip
    rec = recorder()
    rec.on_data(MS, delta("a") + delta("b", finish="stop"))
    rec.on_data(2 * MS, event({"choices": [], "usage": {"completion_tokens": 2}, "metrics": metrics}) + DONE)
    m = rec.finish(3 * MS).server_metrics
    assert m is not None and (m.ttft_ms, m.queue_ms, m.mean_itl_ms) == (12.5, 3.0, 10.0)
    assert orjson.loads(orjson.dumps(rec.record.to_json()))["server_metrics"] == metrics

    whole = recorder(stream=False)
    body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"completion_tokens": 1}, "metrics": {**metrics, "mean_itl_ms": None}}  # fmt: skip
    whole.on_data(MS, orjson.dumps(body))
    whole.on_end(2 * MS)
    m = whole.finish(2 * MS).server_metrics
    assert m is not None and m.mean_itl_ms is None and m.generation_ms == 40.0


def test_metrics_without_a_timing_field_are_not_kept() -> None:
    rec = recorder()
    usage = {"choices": [], "usage": {"completion_tokens": 1}, "metrics": {"time_to_first_token_ms": "x"}}
    rec.on_data(MS, delta("a", finish="stop") + event(usage))
    rec.on_data(2 * MS, DONE)
    assert rec.finish(3 * MS).server_metrics is None


def test_the_http_phases_are_stamped_in_order_and_a_replay_starts_them_again() -> None:
    rec = recorder()
    rec.on_connect(1 * MS, 3 * MS, 2 * MS)
    rec.on_sent(4 * MS)
    rec.on_written(5 * MS)
    rec.on_first_byte(6 * MS)
    r = rec.record
    assert (r.connect_start_ns, r.tls_start_ns, r.connected_ns, r.written_ns, r.first_byte_ns) == (
        1 * MS, 2 * MS, 3 * MS, 5 * MS, 6 * MS)  # fmt: skip
    rec.on_sent(7 * MS)  # a stale connection's replay: what followed the first send is void
    assert r.written_ns is None and r.first_byte_ns is None
