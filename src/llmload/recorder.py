"""Turns what a transport observed of one response into a ``RequestRecord``.

This is the only place that knows what a response *means*: SSE events, token-bearing chunks,
``[DONE]``, usage, errors and timeouts. Transports feed it bytes and stamps through the
``ResponseSink`` protocol; it never touches a socket or a clock of its own, so it runs as well
under Locust as in a unit test.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.errors import ErrorKind
from llmload.protocol.chunks import BadChunk, ChunkInfo, parse_chunk, parse_response
from llmload.protocol.sse import DONE, SSEDecoder, SSEError
from llmload.record import OK, UNFINISHED, RequestRecord, TokenSource

_NS = 1_000_000_000
_EVIDENCE_BYTES = 4096
_MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Per-request limits in seconds; None means no limit."""

    first_token_s: float | None = 300.0
    stall_s: float | None = 120.0
    total_s: float | None = None


class ResponseRecorder:
    """A ``ResponseSink`` that fills one record. Call ``finish`` or ``fail`` exactly once."""

    def __init__(self, record: RequestRecord, timeouts: Timeouts) -> None:
        self.record = record
        self.evidence: bytes | None = None  # the start of an error response's body
        self._timeouts = timeouts
        self._decoder = SSEDecoder()
        self._body = bytearray()
        self._saw_done = False
        self._last_read_ns = 0
        self._usage_tokens: int | None = None  # running usage.completion_tokens, when sent
        self._continuous = True  # every token-bearing event carried usage so far
        self._failed = False

    # -- ResponseSink --------------------------------------------------------------------------

    def on_connect(self, start_ns: int, connected_ns: int) -> None:
        self.record.connect_start_ns = start_ns
        self.record.connected_ns = connected_ns

    def on_sent(self, sent_ns: int) -> None:
        self.record.sent_ns = sent_ns
        self._last_read_ns = sent_ns

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
        try:
            events = self._decoder.feed(data)
        except SSEError as exc:
            self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed SSE: {exc}")
            return True
        return self._on_events(t_ns, [e.data for e in events])

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
            self._on_events(t_ns, [e.data for e in tail])
        if rec.done_ns is None:
            rec.done_ns = t_ns
        if not rec.stream:
            self._on_body(t_ns)

    def read_deadline_ns(self) -> int | None:
        rec = self.record
        sent = rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns
        t = self._timeouts
        limits = []
        if t.total_s is not None:
            limits.append(sent + int(t.total_s * _NS))
        if rec.first_token_ns is None and t.first_token_s is not None:
            limits.append(sent + int(t.first_token_s * _NS))
        elif rec.first_token_ns is not None and t.stall_s is not None:
            limits.append(self._last_read_ns + int(t.stall_s * _NS))
        return min(limits) if limits else None

    # -- the hot path ----------------------------------------------------------------------------

    def _on_events(self, t_ns: int, payloads: list[bytes]) -> bool:
        rec = self.record
        for data in payloads:
            rec.events += 1
            if data == DONE:
                self._saw_done = True
                rec.done_ns = t_ns
                return True
            try:
                chunk = parse_chunk(data)
            except BadChunk as exc:
                self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed JSON event: {exc}")
                return True
            if chunk.error is not None:
                self._fail(t_ns, ErrorKind.ERROR_EVENT, chunk.error)
                return True
            self._on_chunk(t_ns, chunk)
        return False

    def _on_chunk(self, t_ns: int, chunk: ChunkInfo) -> None:
        rec = self.record
        tokens = 1
        if chunk.completion_tokens is not None:
            before = self._usage_tokens or 0
            self._usage_tokens = chunk.completion_tokens
            tokens = chunk.completion_tokens - before
        elif chunk.token_bearing:
            self._continuous = False
        if chunk.finish_reason is not None:
            rec.finish_reason = chunk.finish_reason
        if chunk.prompt_tokens is not None:
            rec.prompt_tokens = chunk.prompt_tokens
        if not chunk.token_bearing:
            if self._continuous and tokens > 0 and rec.event_tokens:
                # Usage grew on an event without text (e.g. a token still being detokenized):
                # those tokens arrived with the last token-bearing event at the latest.
                rec.event_tokens[-1] += tokens
            return
        if rec.first_token_ns is None:
            rec.first_token_ns = t_ns
        if chunk.has_content and rec.first_output_ns is None:
            rec.first_output_ns = t_ns
        rec.last_token_ns = t_ns
        rec.event_ns.append(t_ns)
        rec.event_tokens.append(tokens)

    # -- the end ---------------------------------------------------------------------------------

    def _on_body(self, t_ns: int) -> None:
        try:
            info = parse_response(bytes(self._body))
        except BadChunk as exc:
            self._fail(t_ns, ErrorKind.BAD_PAYLOAD, f"malformed JSON body: {exc}")
            return
        if info.error is not None:
            self._fail(t_ns, ErrorKind.ERROR_EVENT, info.error)
            return
        rec = self.record
        rec.finish_reason = info.finish_reason
        rec.prompt_tokens = info.prompt_tokens
        self._usage_tokens = info.completion_tokens

    def fail(self, t_ns: int, kind: ErrorKind, detail: str) -> None:
        """The transport gave up; timeouts are re-classified by the deadline that bound."""
        if kind in (ErrorKind.STALL_TIMEOUT, ErrorKind.TOTAL_TIMEOUT, ErrorKind.FIRST_TOKEN_TIMEOUT):
            kind = self._timeout_kind(t_ns)
        self._fail(t_ns, kind, detail)

    def _timeout_kind(self, t_ns: int) -> ErrorKind:
        rec = self.record
        sent = rec.sent_ns if rec.sent_ns is not None else rec.scheduled_ns
        total = self._timeouts.total_s
        if total is not None and t_ns - sent >= int(total * _NS) - 1_000_000:
            return ErrorKind.TOTAL_TIMEOUT
        if rec.first_token_ns is None:
            return ErrorKind.FIRST_TOKEN_TIMEOUT
        return ErrorKind.STALL_TIMEOUT

    def _fail(self, t_ns: int, kind: ErrorKind, detail: str) -> None:
        if self._failed:
            return
        self._failed = True
        self.record.outcome = kind.value
        self.record.error_detail = detail[:500]
        if self.record.done_ns is None:
            self.record.done_ns = t_ns

    def unfinished(self, t_ns: int) -> RequestRecord:
        """The run ended while this request was in flight: keep its tokens, invent no latency."""
        if not self._failed:
            self._failed = True
            self.record.outcome = UNFINISHED
        return self._settle(t_ns)

    def finish(self, t_ns: int) -> RequestRecord:
        """Classify the finished exchange and settle its token counts."""
        rec = self.record
        if not self._failed and self.evidence is not None:
            self._fail(t_ns, _status_kind(rec.status or 0), _evidence_text(self.evidence))
        elif not self._failed and rec.stream and not self._saw_done and rec.finish_reason is None:
            self._fail(t_ns, ErrorKind.STREAM_BROKEN, "body ended without [DONE] or finish_reason")
        return self._settle(t_ns)

    def _settle(self, t_ns: int) -> RequestRecord:
        rec = self.record
        if rec.done_ns is None:
            rec.done_ns = t_ns
        usage = self._usage_tokens
        if rec.stream and usage is not None and self._continuous and rec.event_tokens:
            rec.token_source = TokenSource.CONTINUOUS
            rec.output_tokens = usage
        elif usage is not None and rec.outcome == OK:
            rec.token_source = TokenSource.USAGE
            rec.output_tokens = usage
            _spread(rec, usage)
        else:
            rec.token_source = TokenSource.ESTIMATED
            rec.output_tokens = len(rec.event_ns) if rec.stream else (usage or 0)
            for i in range(len(rec.event_tokens)):
                rec.event_tokens[i] = 1
        return rec


def _spread(rec: RequestRecord, total: int) -> None:
    """Spread ``total`` tokens evenly over the events, in integers, cumulatively rounded."""
    n = len(rec.event_tokens)
    before = 0
    for i in range(n):
        upto = (total * (i + 1) + n // 2) // n
        rec.event_tokens[i] = upto - before
        before = upto


def _status_kind(status: int) -> ErrorKind:
    if status == 429:
        return ErrorKind.HTTP_429
    if 400 <= status < 500:
        return ErrorKind.HTTP_4XX
    if status >= 500:
        return ErrorKind.HTTP_5XX
    return ErrorKind.BAD_PAYLOAD  # 1xx/3xx/2xx-but-not-200: not an answer we can measure


def _evidence_text(evidence: bytes) -> str:
    return evidence.decode("utf-8", "replace")
