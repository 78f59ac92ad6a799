"""One request, start to finish: every timestamp docs/metrics.md names, in ``perf_counter_ns``.

A record is filled in by the recorder while its response streams, then frozen in meaning (not in
Python) once ``outcome`` is set. Per token-bearing event it keeps two compact arrays rather than
lists of objects, because thousands of records can be in flight at once:

- ``event_ns[i]``: the stamp of the socket read that completed token-bearing event ``i``; events
  completed by the same read share a stamp, which is how reads are told apart later.
- ``event_tokens[i]``: the tokens event ``i`` carried (see ``token_source`` for how they were
  known).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeGuard

import msgspec

from llmload.core.phases import Phase
from llmload.core.redact import redact_text
from llmload.errors import ErrorKind
from llmload.protocol.jsonvalue import JSON, JSONObject


class TokenSource(StrEnum):
    """How a record's output token count and per-event tokens were known."""

    CONTINUOUS = "continuous_usage"  # usage on every event: exact per event
    USAGE = "usage"  # final usage.completion_tokens, spread evenly over the events
    ESTIMATED = "estimated"  # no usage: one token per token-bearing event


class Outcome(StrEnum):
    """How one request ended: ``requests.jsonl``'s ``outcome``, and the key its request is
    counted under in the summary and the exporter. A failure is its ``ErrorKind``, under the
    same name and value (Python enums do not extend one another; a test keeps them equal)."""

    OK = "ok"
    UNFINISHED = "unfinished"  # the run ended first: no latency, no error
    CANCELLED = "cancelled"  # the client closed it on purpose (--cancel): no latency, no error
    CONNECT_ERROR = ErrorKind.CONNECT_ERROR.value
    CONNECT_TIMEOUT = ErrorKind.CONNECT_TIMEOUT.value
    FIRST_TOKEN_TIMEOUT = ErrorKind.FIRST_TOKEN_TIMEOUT.value
    STALL_TIMEOUT = ErrorKind.STALL_TIMEOUT.value
    TOTAL_TIMEOUT = ErrorKind.TOTAL_TIMEOUT.value
    HTTP_429 = ErrorKind.HTTP_429.value
    HTTP_4XX = ErrorKind.HTTP_4XX.value
    HTTP_5XX = ErrorKind.HTTP_5XX.value
    STREAM_BROKEN = ErrorKind.STREAM_BROKEN.value
    BAD_PAYLOAD = ErrorKind.BAD_PAYLOAD.value
    ERROR_EVENT = ErrorKind.ERROR_EVENT.value
    CHECK_FAILED = ErrorKind.CHECK_FAILED.value

    @classmethod
    def failed(cls, kind: ErrorKind) -> Outcome:
        return cls(kind.value)


OK = Outcome.OK
UNFINISHED = Outcome.UNFINISHED
CANCELLED = Outcome.CANCELLED
# Outcomes that are no failure: the rest are the failure kinds (ErrorKind).
NOT_FAILED = frozenset({OK, UNFINISHED, CANCELLED})


@dataclass(frozen=True, slots=True)
class ServerTimings:
    """What the server says it did for one request, in its own words and clock: llama.cpp's
    ``timings`` (prompt evaluation, then generation; ms). Set beside the client's stamps, it
    splits a request's latency into the server's part and everything else (network, queueing
    outside the server's accounting, the client)."""

    prompt_ms: float  # evaluating the prompt tokens that were not in the cache
    predicted_ms: float  # generating the output tokens
    prompt_n: int  # prompt tokens evaluated (not served from the cache)
    predicted_n: int  # output tokens generated
    cache_n: int | None  # prompt tokens served from the cache

    @classmethod
    def parse(cls, d: JSONObject) -> ServerTimings | None:
        """From a ``timings`` object; None when it lacks the fields or has the wrong types."""
        prompt_ms, predicted_ms = d.get("prompt_ms"), d.get("predicted_ms")
        prompt_n, predicted_n = d.get("prompt_n"), d.get("predicted_n")
        if not (_number(prompt_ms) and _number(predicted_ms) and _number(prompt_n) and _number(predicted_n)):
            return None
        cache = d.get("cache_n")
        return cls(
            float(prompt_ms),
            float(predicted_ms),
            int(prompt_n),
            int(predicted_n),
            cache if isinstance(cache, int) else None,
        )


@dataclass(frozen=True, slots=True)
class ServerMetrics:
    """vLLM's own timing of one request (``metrics``, with ``--enable-per-request-metrics``;
    ms). Its TTFT runs from the request's first scheduling, so it leaves out the queue, which
    ``queue_ms`` holds: client TTFT minus both is what lies outside the engine (HTTP,
    tokenization, network, the client)."""

    ttft_ms: float | None  # time_to_first_token_ms: first scheduled to first token
    queue_ms: float | None  # queue_time_ms: queued to first scheduled
    generation_ms: float | None  # generation_time_ms: first to last token
    mean_itl_ms: float | None  # generation / (tokens - 1)
    tokens_per_second: float | None  # tokens over last token minus first scheduled

    @classmethod
    def parse(cls, d: JSONObject) -> ServerMetrics | None:
        """From a ``metrics`` object; None when it has none of the timing fields."""
        values = [d.get(key) for key in _METRICS_FIELDS]
        numbers = [float(v) if _number(v) else None for v in values]
        if all(n is None for n in numbers):
            return None
        return cls(*numbers)

    def to_json(self) -> dict[str, JSON]:
        """In vLLM's own names, as it sent them."""
        ours = (self.ttft_ms, self.queue_ms, self.generation_ms, self.mean_itl_ms, self.tokens_per_second)
        return dict(zip(_METRICS_FIELDS, ours, strict=True))


_METRICS_FIELDS = (
    "time_to_first_token_ms",
    "queue_time_ms",
    "generation_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
)


def _number(value: JSON) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(slots=True, eq=False)
class RequestRecord:
    request_id: str
    user: str
    stage: int
    phase: Phase
    endpoint: str
    stream: bool
    scheduled_ns: int
    prompt_tokens_requested: int | None = None
    max_tokens: int | None = None
    # The HTTP phases (docs/metrics.md): the transport was handed the request at ``began``; a
    # new connection ran from ``connect_start`` to ``connected``, its TLS handshake from
    # ``tls_start``; the request was written from ``sent`` to ``written``; the response's first
    # byte was read at ``first_byte`` and its head completed at ``headers``.
    began_ns: int | None = None
    connect_start_ns: int | None = None
    tls_start_ns: int | None = None
    connected_ns: int | None = None
    sent_ns: int | None = None
    written_ns: int | None = None
    first_byte_ns: int | None = None
    headers_ns: int | None = None
    first_token_ns: int | None = None
    first_output_ns: int | None = None
    last_token_ns: int | None = None
    done_ns: int | None = None
    status: int | None = None
    outcome: Outcome = Outcome.OK
    error_detail: str | None = None
    finish_reason: str | None = None
    output_tokens: int = 0
    prompt_tokens: int | None = None
    cached_tokens: int | None = None  # of prompt_tokens, served by the server's prefix cache
    token_source: TokenSource = TokenSource.ESTIMATED
    reasoning_tokens: int = 0  # of output_tokens, a reasoning model's thinking (recorder.py)
    images: int = 0  # image_url parts sent (--images), and their encoded files' bytes
    image_bytes: int = 0
    events: int = 0
    reads: int = 0
    labels: tuple[tuple[str, str], ...] = ()  # workload labels, e.g. (("group", "2"), ("turn", "3"))
    name: str | None = None  # a scenario's label for this kind of request (Locust's ``name``)
    server_timings: ServerTimings | None = None  # the server's own account, where it gives one
    server_metrics: ServerMetrics | None = None  # vLLM's, where it gives them
    asked_server_timings: bool = False  # the request asked for them (--server-timings)
    trace_id: str | None = None  # the W3C trace id of the request's ``traceparent`` (32 hex digits)
    span_id: str | None = None  # its parent id: the client span of the request (16 hex digits)
    event_ns: array[int] = field(default_factory=lambda: array("q"))
    event_tokens: array[int] = field(default_factory=lambda: array("l"))

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    @property
    def answer_tokens(self) -> int:
        """Output tokens that are the answer: all of them for a model that does not reason."""
        return self.output_tokens - self.reasoning_tokens

    @property
    def token_events(self) -> int:
        return len(self.event_ns)

    def spread_tokens(self, total: int) -> None:
        """Spread ``total`` tokens evenly over the events, in integers, cumulatively rounded."""
        n = len(self.event_tokens)
        before = 0
        for i in range(n):
            upto = (total * (i + 1) + n // 2) // n
            self.event_tokens[i] = upto - before
            before = upto

    def to_json(self) -> dict[str, JSON]:
        """The ``requests.jsonl`` line: raw stamps in ns plus the derived per-request numbers."""
        return {
            "id": self.request_id,
            "user": self.user,
            "stage": self.stage,
            "phase": self.phase.value,
            "endpoint": self.endpoint,
            "stream": self.stream,
            "outcome": self.outcome.value,
            "status": self.status,
            "error": None if self.error_detail is None else redact_text(self.error_detail),
            "finish_reason": self.finish_reason,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "answer_tokens": self.answer_tokens,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "prompt_tokens_requested": self.prompt_tokens_requested,
            "images": self.images,
            "image_bytes": self.image_bytes,
            "max_tokens": self.max_tokens,
            "token_source": self.token_source.value,
            "events": self.events,
            "token_events": self.token_events,
            "reads": self.reads,
            "scheduled_ns": self.scheduled_ns,
            "began_ns": self.began_ns,
            "connect_start_ns": self.connect_start_ns,
            "tls_start_ns": self.tls_start_ns,
            "connected_ns": self.connected_ns,
            "sent_ns": self.sent_ns,
            "written_ns": self.written_ns,
            "first_byte_ns": self.first_byte_ns,
            "headers_ns": self.headers_ns,
            "first_token_ns": self.first_token_ns,
            "first_output_ns": self.first_output_ns,
            "last_token_ns": self.last_token_ns,
            "done_ns": self.done_ns,
            "labels": dict(self.labels),
            "name": self.name,
            "server_timings": None
            if self.server_timings is None
            else msgspec.to_builtins(self.server_timings),
            "server_metrics": None if self.server_metrics is None else self.server_metrics.to_json(),
            "asked_server_timings": self.asked_server_timings,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "event_ns": self.event_ns.tolist(),
            "event_tokens": self.event_tokens.tolist(),
        }
