"""Turns what a transport observed of one response into a ``RequestRecord``.

This is the only place that knows what a response *means*: SSE events, token-bearing chunks,
``[DONE]``, usage, errors and timeouts. Transports feed it bytes and stamps through the
``ResponseSink`` protocol; it never touches a socket or a clock of its own, so it runs as well
under Locust as in a unit test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from llmload.core.phases import Window
from llmload.core.record import (
    CANCELLED,
    OK,
    UNFINISHED,
    Outcome,
    RequestRecord,
    ServerMetrics,
    ServerTimings,
)
from llmload.core.timeouts import Timeouts
from llmload.core.token_count import settle_tokens
from llmload.errors import ErrorKind
from llmload.protocol.api_events import (
    messages_body,
    messages_fields,
    rerank_body,
    responses_body,
    responses_fields,
)
from llmload.protocol.chunks import BadChunk, ChunkFields, ChunkInfo, event_fields, parse_response
from llmload.protocol.jsonvalue import JSONObject
from llmload.protocol.sse import DONE, SSEDecoder, SSEError

# Each API's reading of one streamed event, and of a whole body: the same tuple for all (chunks.py).
_EVENT_FIELDS: dict[str, Callable[[bytes], ChunkFields]] = {
    "responses": responses_fields,
    "messages": messages_fields,
}
_BODY_FIELDS: dict[str, Callable[[bytes], ChunkFields]] = {
    "responses": responses_body,
    "messages": messages_body,
    "rerank": rerank_body,
}
_NO_OUTPUT = frozenset({"embeddings", "rerank"})
_EVIDENCE_BYTES = 4096
_MAX_BODY_BYTES = 64 * 1024 * 1024


class AnswerReader(Protocol):
    """The one caller that reads a request's answer (a scenario's call that returns a reply):
    the recorder appends the response's payloads (SSE data, or the whole body) to
    ``payloads`` as they arrive and, once the request succeeded, asks ``judge`` before the
    record is final. A failure it names makes the record a failed check."""

    payloads: list[bytes]

    def judge(self, record: RequestRecord) -> str | None: ...


class ResponseRecorder:
    """A ``ResponseSink`` that fills one record. Call ``finish`` or ``fail`` exactly once."""

    def __init__(
        self,
        record: RequestRecord,
        timeouts: Timeouts,
        reader: AnswerReader | None = None,
        *,
        window: Window | None = None,
    ) -> None:
        self.record = record
        # The stage's window: a request's latency belongs to the phase it was *sent* in
        # (docs/metrics.md), known once it ends. None leaves the phase it was created with.
        self._window = window
        # None keeps nothing, as measuring alone needs nothing; the list is held apart from
        # its reader so the read path appends to it without an attribute lookup more.
        self._reader = reader
        self._keep = None if reader is None else reader.payloads
        self.evidence: bytes | None = None  # the start of an error response's body
        self._timeouts = timeouts
        self._fields = _EVENT_FIELDS.get(record.endpoint, event_fields)
        self._decoder = SSEDecoder()
        self._body = bytearray()
        self._saw_done = False
        self._last_read_ns = 0
        self._usage_tokens: int | None = None  # running usage.completion_tokens, when sent
        self._continuous = True  # every token-bearing event carried usage so far
        # Tokens of reasoning events (one each unless usage is continuous), and the server's own
        # count of them (``completion_tokens_details.reasoning_tokens``) when it sends one.
        self._thought = 0
        self._thought_usage: int | None = None
        self._failed = False

    # -- ResponseSink --------------------------------------------------------------------------

    def on_connect(self, start_ns: int, connected_ns: int, tls_start_ns: int | None = None) -> None:
        rec = self.record
        rec.connect_start_ns, rec.connected_ns, rec.tls_start_ns = start_ns, connected_ns, tls_start_ns

    def on_sent(self, sent_ns: int) -> None:
        self.record.sent_ns = sent_ns
        self._last_read_ns = sent_ns
        # A replay on a fresh connection (base.py) starts the phases after the send again.
        self.record.written_ns = self.record.first_byte_ns = None

    def on_written(self, t_ns: int) -> None:
        self.record.written_ns = t_ns

    def on_first_byte(self, t_ns: int) -> None:
        self.record.first_byte_ns = t_ns

    def on_headers(self, t_ns: int, status: int, headers: dict[str, str]) -> None:
        self.record.headers_ns = t_ns
        self.record.status = status
        if status != 200:
            retry_after = headers.get("retry-after")
            self.evidence = f"retry-after: {retry_after}\n".encode() if retry_after else b""

    def on_data(self, t_ns: int, data: bytes) -> bool:
        rec = self.record
        rec.reads += 1
        self._last_read_ns = t_ns
        if self.evidence is not None:
            if len(self.evidence) < _EVIDENCE_BYTES:
                self.evidence += data[: _EVIDENCE_BYTES - len(self.evidence)]
            return False
        if not rec.stream:
            if len(self._body) + len(data) > _MAX_BODY_BYTES:
                self._fail(t_ns, ErrorKind.BAD_PAYLOAD, "response body over 64 MiB")
                return True
            self._body += data
            return False
        one = self._decoder.whole_event(data)
        if one is not None:  # most reads of paced streams: one whole event
            if self._keep is not None:
                self._keep.append(one)
            return self._on_event(t_ns, one)
        try:
            payloads = self._decoder.feed_data(data)
        except SSEError as exc:
            self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed SSE: {exc}")
            return True
        if not payloads:
            return False
        if self._keep is not None:
            self._keep.extend(payloads)
        return self._on_events(t_ns, payloads)

    def on_end(self, t_ns: int) -> None:
        rec = self.record
        if self._failed or self.evidence is not None:
            return
        if rec.stream and not self._saw_done:
            try:
                tail = self._decoder.close()
            except SSEError as exc:
                self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed SSE: {exc}")
                return
            payloads = [e.data for e in tail]
            if self._keep is not None:
                self._keep.extend(payloads)
            self._on_events(t_ns, payloads)
        if rec.done_ns is None:
            rec.done_ns = t_ns
        if not rec.stream:
            self._on_body(t_ns)

    def read_deadline_ns(self) -> int | None:
        rec = self.record
        sent = rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns
        return self._timeouts.deadline_ns(sent, rec.first_token_ns, self._last_read_ns)

    # -- the hot path ----------------------------------------------------------------------------

    def _on_events(self, t_ns: int, payloads: list[bytes]) -> bool:
        """The events of one read: per event a parse and, if it bears tokens, two appends.

        Locals stand in for attributes inside the loop, and what is the same for every event of
        the read (its stamp, the counters) is written once after it: this loop is most of a
        worker's CPU when the server is ahead of it.
        """
        rec = self.record
        counts = rec.event_tokens
        add_stamp, add_count = rec.event_ns.append, counts.append
        usage, continuous, thought = self._usage_tokens, self._continuous, self._thought
        token_events, content, stop, seen = len(counts), False, False, 0
        failure: tuple[ErrorKind, str] | None = None
        fields = self._fields
        for seen, data in enumerate(payloads, 1):  # noqa: B007 (read after the loop)
            if data == DONE:
                self._saw_done = stop = True
                rec.done_ns = t_ns
                break
            try:
                (bearing, has_content, finish, completion, prompt, error, cached, timings, thinking,
                 thinking_usage, metrics) = fields(data)  # fmt: skip
            except BadChunk as exc:
                failure = (ErrorKind.BAD_PAYLOAD, f"malformed JSON event: {exc}")
                break
            if error is not None:
                failure = (ErrorKind.ERROR_EVENT, error)
                break
            tokens = 1
            if completion is not None:
                tokens = completion - (usage or 0)
                usage = completion
            elif bearing:
                continuous = False
            if finish is not None:  # the last events only: no local for it
                rec.finish_reason = finish
            if prompt is not None or timings is not None or metrics is not None:
                self._on_last(prompt, cached, thinking_usage, timings, metrics)
            if bearing:
                if thinking:
                    thought += tokens
                content = content or has_content
                add_stamp(t_ns)
                add_count(tokens)
            elif continuous and tokens > 0 and counts:
                # Usage grew on an event without text (e.g. a token still being detokenized):
                # those tokens arrived with the last token-bearing event at the latest.
                counts[-1] += tokens
        rec.events += seen
        self._usage_tokens, self._continuous, self._thought = usage, continuous, thought
        if len(counts) > token_events:
            rec.last_token_ns = t_ns
            if rec.first_token_ns is None:
                rec.first_token_ns = t_ns
        if content and rec.first_output_ns is None:
            rec.first_output_ns = t_ns
        if failure is not None:
            self._fail(t_ns, *failure)
            return True
        return stop

    def _on_event(self, t_ns: int, data: bytes) -> bool:
        """``_on_events`` for a read of exactly one event, the common read of paced streams:
        straight to the record's attributes, since the loop's locals, set up per read and
        written back after it, cost more than they save for one event (0.45 µs of 2.3 per
        event, bench/api_parse.py). The two must read events alike: tests/unit/core/
        test_recorder_paths.py feeds the same streams through both."""
        rec = self.record
        rec.events += 1
        if data == DONE:
            self._saw_done = True
            rec.done_ns = t_ns
            return True
        try:
            (bearing, has_content, finish, completion, prompt, error, cached, timings, thinking,
             thinking_usage, metrics) = self._fields(data)  # fmt: skip
        except BadChunk as exc:
            self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed JSON event: {exc}")
            return True
        if error is not None:
            self._fail(t_ns, ErrorKind.ERROR_EVENT, error)
            return True
        tokens = 1
        if completion is not None:
            tokens = completion - (self._usage_tokens or 0)
            self._usage_tokens = completion
        elif bearing:
            self._continuous = False
        if finish is not None:
            rec.finish_reason = finish
        if prompt is not None or timings is not None or metrics is not None:
            self._on_last(prompt, cached, thinking_usage, timings, metrics)
        if bearing:
            if thinking:
                self._thought += tokens
            elif has_content and rec.first_output_ns is None:
                rec.first_output_ns = t_ns
            rec.event_ns.append(t_ns)
            rec.event_tokens.append(tokens)
            rec.last_token_ns = t_ns
            if rec.first_token_ns is None:
                rec.first_token_ns = t_ns
        elif self._continuous and tokens > 0 and rec.event_tokens:
            # Usage grew on an event without text (e.g. a token still being detokenized):
            # those tokens arrived with the last token-bearing event at the latest.
            rec.event_tokens[-1] += tokens
        return False

    def _on_last(
        self,
        prompt: int | None,
        cached: int | None,
        thinking_usage: int | None,
        timings: JSONObject | None,
        metrics: JSONObject | None,
    ) -> None:
        """What only a stream's last events carry: the prompt's usage and the server's own
        timings (off the loops above, which run per event)."""
        rec = self.record
        if prompt is not None:
            rec.prompt_tokens = prompt
            if cached is not None:
                rec.cached_tokens = cached
            if thinking_usage is not None:  # with the final usage, beside prompt_tokens
                self._thought_usage = thinking_usage
        if timings is not None:
            rec.server_timings = ServerTimings.parse(timings) or rec.server_timings
        if metrics is not None:
            rec.server_metrics = ServerMetrics.parse(metrics) or rec.server_metrics

    # -- the end ---------------------------------------------------------------------------------

    def _on_body(self, t_ns: int) -> None:
        if self._keep is not None:
            self._keep.append(bytes(self._body))
        rec = self.record
        try:
            body = bytes(self._body)
            reader = _BODY_FIELDS.get(rec.endpoint)
            info = parse_response(body) if reader is None else ChunkInfo(*reader(body))
        except BadChunk as exc:
            self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed JSON body: {exc}")
            return
        if info.error is not None:
            self._fail(t_ns, ErrorKind.ERROR_EVENT, info.error)
            return
        rec.finish_reason = info.finish_reason
        rec.prompt_tokens = info.prompt_tokens
        rec.cached_tokens = info.cached_tokens
        if info.timings is not None:
            rec.server_timings = ServerTimings.parse(info.timings)
        if info.metrics is not None:
            rec.server_metrics = ServerMetrics.parse(info.metrics)
        self._thought_usage = info.reasoning_tokens
        # An embedding or a ranking has no output tokens by definition: zero is exact, not unknown.
        self._usage_tokens = 0 if rec.endpoint in _NO_OUTPUT else info.completion_tokens

    def fail(self, t_ns: int, kind: ErrorKind, detail: str) -> None:
        """The transport gave up; timeouts are re-classified by the deadline that bound."""
        if kind in (ErrorKind.STALL_TIMEOUT, ErrorKind.TOTAL_TIMEOUT, ErrorKind.FIRST_TOKEN_TIMEOUT):
            kind = self._timeout_kind(t_ns)
        self._fail(t_ns, kind, detail)

    def _timeout_kind(self, t_ns: int) -> ErrorKind:
        rec = self.record
        sent = rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns
        return self._timeouts.kind(t_ns, sent, rec.first_token_ns)

    def _fail(self, t_ns: int, kind: ErrorKind, detail: str) -> None:
        if self._failed:
            return
        self._failed = True
        self.record.outcome = Outcome.failed(kind)
        self.record.error_detail = detail[:500]
        if self.record.done_ns is None:
            self.record.done_ns = t_ns

    def unfinished(self, t_ns: int) -> RequestRecord:
        """The run ended while this request was in flight: keep its tokens, invent no latency."""
        if not self._failed:
            self._failed = True
            self.record.outcome = UNFINISHED
        return self._settle(t_ns)

    def cancelled(self, t_ns: int) -> RequestRecord:
        """The client closed the request on purpose (``--cancel``): keep its tokens, say when."""
        if not self._failed:
            self._failed = True
            rec = self.record
            rec.outcome = CANCELLED
            began = rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns
            during = "prefill" if rec.first_token_ns is None else "decode"
            rec.error_detail = (
                f"cancelled by the client {(t_ns - began) / 1e6:.0f} ms after it was sent, during {during}"
            )
        return self._settle(t_ns)

    def finish(self, t_ns: int) -> RequestRecord:
        """Classify the exchange that ended at ``t_ns`` and settle its token counts; then, if
        it succeeded, the answer's reader judges it: a failure it names makes the record a
        failed check. The record is final when it leaves here."""
        rec = self.record
        if not self._failed and self.evidence is not None:
            evidence = self.evidence.decode("utf-8", "replace")
            self._fail(t_ns, ErrorKind.of_status(rec.status or 0), evidence)
        elif not self._failed and rec.stream and not self._saw_done and rec.finish_reason is None:
            self._fail(t_ns, ErrorKind.STREAM_BROKEN, "body ended without [DONE] or finish_reason")
        self._settle(t_ns)
        reader = self._reader
        if reader is not None and rec.outcome == OK and (failure := reader.judge(rec)) is not None:
            rec.outcome = Outcome.CHECK_FAILED
            rec.error_detail = failure[:500]
        return rec

    def _settle(self, t_ns: int) -> RequestRecord:
        rec = self.record
        if rec.done_ns is None:
            rec.done_ns = t_ns
        settle_tokens(rec, self._usage_tokens, self._continuous, self._thought, self._thought_usage)
        if self._window is not None:
            rec.phase = self._window.phase_at(rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns)
        return rec
