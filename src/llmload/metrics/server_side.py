"""The server's own account of each request, joined to the client's record of the same request.

Two engines send one today, each in its own words, and each is kept in them:

- llama.cpp's ``timings`` (always sent): prompt evaluation and generation, in ms. Its prefill
  has no queue in it (a request waits for a slot before its timings start), so client TTFT
  minus prefill is the slot wait, the network and the client together.
- vLLM's ``metrics`` (``--enable-per-request-metrics``): its TTFT runs from the request's first
  scheduling, and ``queue_time_ms`` holds the wait before it; so client TTFT minus both is what
  lies outside the engine: HTTP, tokenization, the network, the client. Its mean ITL is the
  engine's first-to-last token over the tokens after the first, the client's TPOT exactly.

Every difference is per request and signed (the two clocks' stamps can fall either side).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.core.record import RequestRecord
from llmload.metrics import derive
from llmload.metrics.histogram import LogHistogram, SignedHistogram

_MS = 1_000_000


@dataclass(slots=True)
class ServerSide:
    """A stage's joins, mergeable like the rest of its stats."""

    asked: int = 0  # requests that asked for the server's timing (--server-timings)
    requests: int = 0  # with llama.cpp's timings
    cache_n: int = 0
    prefill: LogHistogram = field(default_factory=LogHistogram)  # prompt_ms, in ns
    decode_per_token: LogHistogram = field(default_factory=LogHistogram)  # predicted_ms / predicted_n
    ttft_minus_prefill: SignedHistogram = field(default_factory=SignedHistogram)
    decode_minus_predicted: SignedHistogram = field(default_factory=SignedHistogram)
    tpot_minus_server: SignedHistogram = field(default_factory=SignedHistogram)
    # vLLM's metrics
    metrics_requests: int = 0
    queue_ns_total: int = 0  # over the requests with both a server queue time and a client TTFT
    ttft_ns_total: int = 0
    engine_ttft: LogHistogram = field(default_factory=LogHistogram)  # time_to_first_token_ms
    engine_queue: LogHistogram = field(default_factory=LogHistogram)  # queue_time_ms
    engine_itl: LogHistogram = field(default_factory=LogHistogram)  # mean_itl_ms
    ttft_outside_engine: SignedHistogram = field(default_factory=SignedHistogram)
    tpot_minus_engine_itl: SignedHistogram = field(default_factory=SignedHistogram)
    decode_minus_generation: SignedHistogram = field(default_factory=SignedHistogram)

    def add(self, r: RequestRecord, m: derive.Measures) -> None:
        self.asked += r.asked_server_timings
        if r.server_timings is not None:
            self._add_timings(r, m)
        if r.server_metrics is not None:
            self._add_metrics(r, m)

    def _add_timings(self, r: RequestRecord, m: derive.Measures) -> None:
        t = r.server_timings
        assert t is not None
        self.requests += 1
        self.cache_n += t.cache_n or 0
        prefill_ns, predicted_ns = round(t.prompt_ms * _MS), round(t.predicted_ms * _MS)
        self.prefill.add(prefill_ns)
        if t.predicted_n > 0:
            self.decode_per_token.add(round(predicted_ns / t.predicted_n))
        if m.ttft is not None:
            self.ttft_minus_prefill.add(m.ttft - prefill_ns)
        span = derive.gap(r.first_token_ns, r.last_token_ns)
        if span is not None and r.output_tokens >= 2:
            self.decode_minus_predicted.add(span - predicted_ns)
        if span is not None and t.predicted_n >= 2 and r.output_tokens >= 2:
            # per token as the client counts TPOT, (last - first) / (N - 1), on both sides
            self.tpot_minus_server.add(
                round(span / (r.output_tokens - 1) - predicted_ns / (t.predicted_n - 1))
            )

    def _add_metrics(self, r: RequestRecord, measures: derive.Measures) -> None:
        m = r.server_metrics
        assert m is not None
        self.metrics_requests += 1
        ttft = measures.ttft
        engine_ttft = None if m.ttft_ms is None else round(m.ttft_ms * _MS)
        queue = None if m.queue_ms is None else round(m.queue_ms * _MS)
        if engine_ttft is not None:
            self.engine_ttft.add(max(engine_ttft, 0))
        if queue is not None:
            queue = max(queue, 0)
            self.engine_queue.add(queue)
            if ttft is not None:
                self.queue_ns_total += queue
                self.ttft_ns_total += ttft
        if ttft is not None and engine_ttft is not None and queue is not None:
            self.ttft_outside_engine.add(ttft - queue - engine_ttft)
        if m.mean_itl_ms is not None:
            itl = round(m.mean_itl_ms * _MS)
            self.engine_itl.add(max(itl, 0))
            tpot = measures.tpot
            if tpot is not None:
                self.tpot_minus_engine_itl.add(round(tpot) - itl)
        span = derive.gap(r.first_token_ns, r.last_token_ns)
        if span is not None and m.generation_ms is not None and r.output_tokens >= 2:
            self.decode_minus_generation.add(span - round(m.generation_ms * _MS))

    def merge(self, other: ServerSide) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in _HISTOGRAMS:
            getattr(self, name).merge(getattr(other, name))


_COUNTS = ("asked", "requests", "cache_n", "metrics_requests", "queue_ns_total", "ttft_ns_total")
_SIGNED = frozenset(
    {
        "ttft_minus_prefill",
        "decode_minus_predicted",
        "tpot_minus_server",
        "ttft_outside_engine",
        "tpot_minus_engine_itl",
        "decode_minus_generation",
    }
)
_HISTOGRAMS = (
    "prefill",
    "decode_per_token",
    "engine_ttft",
    "engine_queue",
    "engine_itl",
    *sorted(_SIGNED),
)
