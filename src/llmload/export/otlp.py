"""One OpenTelemetry client span per request, exported over OTLP/HTTP (``--otlp-endpoint``).

The span's trace id and span id are the ones the request's ``traceparent`` carried
(``core/tracecontext.py``), so a server that joins the trace (vLLM with
``--otlp-traces-endpoint``) hangs its own spans under ours, and Jaeger or Tempo shows both in
one trace. The span runs from the hand-over to the transport to the last byte, with events at
the first token, the first answer token and the last token, and the request's outcome.

Spans are built when a finished record is folded (off the request path, when the loop is idle)
from the record's own stamps, and queued to the SDK's batch processor, which encodes and sends
them in the background; ``close`` flushes what is queued, so a run's last spans are not lost.
bench/otlp_cost.py measures both halves per request.
"""

from __future__ import annotations

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from llmload.core.record import NOT_FAILED, RequestRecord
from llmload.metrics import derive

TRACES_PATH = "/v1/traces"
# Spans waiting for the batch processor, at most: a run of a few thousand requests a second
# between two exports (each second) fits; the SDK's default of 2,048 would drop spans.
_QUEUE = 65_536
_OPERATION = {"chat": "chat", "completions": "text_completion", "embeddings": "embeddings"}
_ROOT = Context()  # a span started here has no parent: its trace id is the generator's


def traces_url(endpoint: str) -> str:
    """A collector's base URL (``http://host:4318``) or its traces URL, as the traces URL."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


class _GivenIds(IdGenerator):
    """Hands the SDK the ids the request's traceparent already carried."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


class RequestSpans:
    """Turns finished records into client spans; one per process, closed at the end of the run."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        exporter: SpanExporter | None = None,
        run_id: str,
        process: str,
        model: str | None,
        wall_minus_perf_ns: int,
    ) -> None:
        """``exporter``: where spans go instead of an OTLP endpoint (a benchmark's, a test's)."""
        self._ids = _GivenIds()
        resource = Resource.create(
            {"service.name": "llmload", "llmload.run_id": run_id, "llmload.process": process}
        )
        self._provider = TracerProvider(resource=resource, id_generator=self._ids)
        if exporter is None:
            assert endpoint is not None
            exporter = OTLPSpanExporter(endpoint=traces_url(endpoint))
        self._provider.add_span_processor(
            BatchSpanProcessor(exporter, max_queue_size=_QUEUE, schedule_delay_millis=1000)
        )
        self._tracer = self._provider.get_tracer("llmload")
        self._model = model
        self._offset = wall_minus_perf_ns  # perf_counter_ns + offset: the Unix epoch in ns

    def add(self, r: RequestRecord, m: derive.Measures) -> None:
        """The record's span, queued for export; a record that sent no traceparent has none.
        ``m``: the record's measures, as the fold derived them."""
        if r.trace_id is None:
            return
        self._ids.trace_id = int(r.trace_id, 16)
        self._ids.span_id = int(r.span_id, 16) if r.span_id else 0
        begin = r.began_ns if r.began_ns is not None else r.scheduled_ns
        span = self._tracer.start_span(
            f"{_OPERATION[r.endpoint]} {self._model or ''}".rstrip(),
            context=_ROOT,
            kind=SpanKind.CLIENT,
            start_time=begin + self._offset,
            attributes=self._attributes(r, m),
        )
        for name, stamp in (
            ("first_token", r.first_token_ns),
            ("first_answer_token", r.first_output_ns),
            ("last_token", r.last_token_ns),
        ):
            if stamp is not None:
                span.add_event(name, timestamp=stamp + self._offset)
        if r.outcome not in NOT_FAILED:
            span.set_status(Status(StatusCode.ERROR, r.outcome.value))
        span.end(end_time=(r.done_ns if r.done_ns is not None else begin) + self._offset)

    def _attributes(self, r: RequestRecord, m: derive.Measures) -> dict[str, str | int | float]:
        out: dict[str, str | int | float] = {
            "gen_ai.operation.name": _OPERATION[r.endpoint],
            "gen_ai.usage.output_tokens": r.output_tokens,
            "http.request.method": "POST",
            "llmload.request_id": r.request_id,
            "llmload.user": r.user,
            "llmload.stage": r.stage,
            "llmload.phase": r.phase.value,
            "llmload.outcome": r.outcome.value,
        }
        if self._model is not None:
            out["gen_ai.request.model"] = self._model
        if r.prompt_tokens is not None:
            out["gen_ai.usage.input_tokens"] = r.prompt_tokens
        if r.status is not None:
            out["http.response.status_code"] = r.status
        if m.ttft is not None:
            out["llmload.ttft_ms"] = m.ttft / 1e6
        if m.tpot is not None:
            out["llmload.tpot_ms"] = m.tpot / 1e6
        return out

    def close(self) -> None:
        """Export what is queued, then stop: the run's last spans reach the collector."""
        self._provider.shutdown()
