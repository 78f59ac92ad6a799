"""Per-request metrics, derived from one record exactly as docs/metrics.md defines them.

Pure functions over ``RequestRecord``; every duration is int nanoseconds and absent (None) when
the record cannot define it, never zero.
"""

from __future__ import annotations

from collections.abc import Iterator

from llmload.record import RequestRecord


def gap(start: int | None, end: int | None) -> int | None:
    if start is None or end is None:
        return None
    return end - start


def ttft_ns(r: RequestRecord) -> int | None:
    return gap(r.sent_ns, r.first_token_ns)


def ttfot_ns(r: RequestRecord) -> int | None:
    return gap(r.sent_ns, r.first_output_ns)


def connect_ns(r: RequestRecord) -> int | None:
    return gap(r.connect_start_ns, r.connected_ns)


def queue_ns(r: RequestRecord) -> int | None:
    return gap(r.scheduled_ns, r.sent_ns)


def e2e_ns(r: RequestRecord) -> int | None:
    return gap(r.sent_ns, r.done_ns)


def tpot_ns(r: RequestRecord) -> float | None:
    """``(last_token - first_token) / (N - 1)``, defined for N >= 2 streamed tokens."""
    span = gap(r.first_token_ns, r.last_token_ns)
    if span is None or r.output_tokens < 2:
        return None
    return span / (r.output_tokens - 1)


def reads(r: RequestRecord) -> Iterator[tuple[int, int, int]]:
    """Token-bearing reads as ``(stamp_ns, events, tokens)``, in order."""
    stamps, tokens = r.event_ns, r.event_tokens
    n = len(stamps)
    i = 0
    while i < n:
        t = stamps[i]
        j = i + 1
        while j < n and stamps[j] == t:
            j += 1
        yield t, j - i, sum(tokens[i:j])
        i = j


def itl_samples(r: RequestRecord) -> Iterator[tuple[int, int]]:
    """ITL as ``(per_token_gap_ns, token_count)``: each read after the first contributes its gap
    to the previous token-bearing read, split evenly over the tokens it completed."""
    prev: int | None = None
    for t, _events, tokens in reads(r):
        if prev is not None and tokens > 0:
            yield (t - prev) // tokens, tokens
        prev = t


def chunk_gaps(r: RequestRecord) -> Iterator[int]:
    """Raw gaps between consecutive token-bearing reads (AIPerf's inter-chunk latency)."""
    prev: int | None = None
    for t, _events, _tokens in reads(r):
        if prev is not None:
            yield t - prev
        prev = t


def tokens_in(r: RequestRecord, start_ns: int, end_ns: int | None) -> int:
    """Output tokens whose read fell inside ``[start_ns, end_ns)`` (end None: open window)."""
    total = 0
    for t, tok in zip(r.event_ns, r.event_tokens, strict=True):
        if t >= start_ns and (end_ns is None or t < end_ns):
            total += tok
    return total
