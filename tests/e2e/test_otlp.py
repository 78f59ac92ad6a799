"""Client spans over OTLP/HTTP, received as a collector receives them: real protobuf, decoded with
the ``opentelemetry-proto`` package, from a real locust run against the simulator."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust

pytestmark = pytest.mark.e2e


class Collector:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.resources: list[dict[str, str]] = []
        self.content_types: set[str] = set()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.content_types.add(self.headers["Content-Type"])
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    attrs = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope in resource_spans.scope_spans:
                        collector.spans.extend(scope.spans)
                        collector.resources.extend(attrs for _ in scope.spans)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


def test_every_request_is_one_span_under_its_traceparent_and_none_is_lost(
    run_locust: RunLocust, collector: Collector
) -> None:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5"]) as sim:
        run = run_locust(
            sim.url, "--max-tokens", "16", "--otlp-endpoint", collector.url, users=8, run_time="6s"
        )
        served = {entry["client_request_id"]: entry for entry in sim.requests()}
    records = {r["id"]: r for r in run.records}
    assert len(records) > 50
    spans = {}
    for span in collector.spans:
        attrs = {a.key: a.value for a in span.attributes}
        spans[attrs["llmload.request_id"].string_value] = (span, attrs)
    # one span per request, the last ones (flushed as the run ended) included
    assert len(collector.spans) == len(records) and set(spans) == set(records)
    assert collector.content_types == {"application/x-protobuf"}
    assert {r["llmload.run_id"] for r in collector.resources} == {run.summary["run"]["id"]}
    for request_id, record in records.items():
        span, attrs = spans[request_id]
        assert span.trace_id.hex() == record["trace_id"] and span.span_id.hex() == record["span_id"]
        assert not span.parent_span_id and span.kind == span.SPAN_KIND_CLIENT
        # the server saw the same trace context: its spans would be children of this one
        assert served[request_id]["traceparent"] == f"00-{record['trace_id']}-{record['span_id']}-01"
        names = [e.name for e in span.events]
        times = [e.time_unix_nano for e in span.events]
        if record["outcome"] == "ok":
            assert names == ["first_token", "first_answer_token", "last_token"]
        # not timing: each event inside its span, in order: causal order of stamps on one clock
        assert times == sorted(times) and all(
            span.start_time_unix_nano <= t <= span.end_time_unix_nano for t in times
        )
        assert attrs["llmload.outcome"].string_value == record["outcome"]
        assert attrs["gen_ai.usage.output_tokens"].int_value == record["output_tokens"]
        # the span's length is the record's, to the clock's conversion (the same offset for both ends)
        length = span.end_time_unix_nano - span.start_time_unix_nano
        assert length == record["done_ns"] - record["began_ns"]
