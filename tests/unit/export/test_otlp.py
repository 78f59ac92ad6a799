"""A request's client span: its ids are the traceparent's, its times and events the record's."""

from __future__ import annotations

from array import array

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from llmload.core.phases import Phase
from llmload.core.record import Outcome, RequestRecord
from llmload.core.tracecontext import trace_ids
from llmload.errors import ErrorKind
from llmload.export.otlp import RequestSpans, traces_url
from llmload.metrics import derive

pytest.importorskip("opentelemetry.sdk")

MS = 1_000_000


def _record(request_id: str, outcome: Outcome = Outcome.OK) -> RequestRecord:
    r = RequestRecord(request_id, "u0", 0, Phase.MEASURE, "chat", True, scheduled_ns=10 * MS)
    r.trace_id, r.span_id = trace_ids("run", request_id)
    r.began_ns, r.sent_ns, r.first_token_ns, r.first_output_ns = 10 * MS, 11 * MS, 40 * MS, 60 * MS
    r.last_token_ns = r.done_ns = 90 * MS
    r.event_ns, r.event_tokens = array("q", [40 * MS, 60 * MS, 90 * MS]), array("l", [1, 1, 1])
    r.output_tokens, r.prompt_tokens, r.status, r.outcome = 3, 12, 200, outcome
    return r


def test_each_record_is_one_client_span_under_the_traceparent_it_sent() -> None:
    exporter = InMemorySpanExporter()
    spans = RequestSpans(
        exporter=exporter, run_id="run", process="local", model="m", wall_minus_perf_ns=1_000 * MS
    )
    records = [_record("local-0-0"), _record("local-0-1", Outcome.failed(ErrorKind.HTTP_5XX))]
    for r in records:
        spans.add(r, derive.measure(r))
    spans.close()  # flushes the batch: nothing queued is lost
    got = {s.attributes["llmload.request_id"]: s for s in exporter.get_finished_spans()}
    assert set(got) == {r.request_id for r in records}
    for r in records:
        span = got[r.request_id]
        assert f"{span.context.trace_id:032x}" == r.trace_id and f"{span.context.span_id:016x}" == r.span_id
        assert span.parent is None and span.kind is SpanKind.CLIENT and span.name == "chat m"
        assert (span.start_time, span.end_time) == (1_010 * MS, 1_090 * MS)
        assert [(e.name, e.timestamp) for e in span.events] == [
            ("first_token", 1_040 * MS), ("first_answer_token", 1_060 * MS), ("last_token", 1_090 * MS)
        ]  # fmt: skip
        assert span.attributes["gen_ai.usage.output_tokens"] == 3
        assert span.attributes["llmload.ttft_ms"] == pytest.approx(29.0)
    assert got["local-0-1"].status.status_code is StatusCode.ERROR
    assert got["local-0-0"].status.status_code is StatusCode.UNSET


def test_a_collectors_base_url_becomes_its_traces_url() -> None:
    assert traces_url("http://c:4318") == "http://c:4318/v1/traces"
    assert traces_url("http://c:4318/v1/traces/") == "http://c:4318/v1/traces"
