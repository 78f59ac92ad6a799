"""Per-request metrics, derived from one record exactly as docs/metrics.md defines them.

Pure functions over ``RequestRecord``; every duration is int nanoseconds and absent (None) when
the record cannot define it, never zero.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from operator import sub

from llmload.core.record import RequestRecord


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


def think_ns(r: RequestRecord) -> int | None:
    """TTFOT - TTFT: how long a reasoning model thought before its first answer token."""
    return gap(r.first_token_ns, r.first_output_ns)


def tpot_reasoning_ns(r: RequestRecord) -> float | None:
    """``(first_output - first_token) / R``: per reasoning token, R >= 1. From the first
    thinking token to the first answer token is R decode steps when one token comes per step."""
    span = think_ns(r)
    if span is None or r.reasoning_tokens < 1:
        return None
    return span / r.reasoning_tokens


def tpot_answer_ns(r: RequestRecord) -> float | None:
    """``(last_token - first_output) / (A - 1)``: TPOT of the answer alone, A >= 2 answer tokens."""
    span = gap(r.first_output_ns, r.last_token_ns)
    if span is None or r.answer_tokens < 2:
        return None
    return span / (r.answer_tokens - 1)


@dataclass(frozen=True, slots=True)
class TokenReads:
    """A record's token-bearing reads, found in one pass over its arrays: per read its stamp,
    the events it completed and their tokens. Folding walks these lists, not the arrays again."""

    stamps: list[int]
    events: list[int]
    tokens: list[int]

    def gaps(self) -> list[int]:
        """Gaps between consecutive reads (AIPerf's inter-chunk latency)."""
        stamps = self.stamps
        return list(map(sub, stamps[1:], stamps[:-1]))

    def itl(self) -> tuple[list[int], list[int]]:
        """ITL as parallel lists ``(per_token_gap_ns, token_count)``: each read after the first
        contributes its gap to the previous read, split evenly over the tokens it completed."""
        gaps, tokens = self.gaps(), self.tokens[1:]
        if tokens.count(1) == len(tokens):  # one token per read: the gaps are the ITLs
            return gaps, tokens
        pairs = [(g // n, n) for g, n in zip(gaps, tokens, strict=True) if n > 0]
        return [g for g, _ in pairs], [n for _, n in pairs]


def token_reads(r: RequestRecord) -> TokenReads:
    stamps, tokens = r.event_ns.tolist(), r.event_tokens.tolist()
    n = len(stamps)
    if len(set(stamps)) == n:  # every event its own read: nothing to group
        return TokenReads(stamps, [1] * n, tokens)
    out_stamps: list[int] = []
    out_events: list[int] = []
    out_tokens: list[int] = []
    i = 0
    while i < n:
        t = stamps[i]
        j = bisect_right(stamps, t, i)  # stamps are in read order: a read's events are a run
        out_stamps.append(t)
        out_events.append(j - i)
        out_tokens.append(sum(tokens[i:j]))
        i = j
    return TokenReads(out_stamps, out_events, out_tokens)


@dataclass(frozen=True, slots=True)
class Measures:
    """One request's metrics, derived once when it is folded, for every consumer of the fold
    (the stage's statistics and its named parts, the exporter's buckets, the time series, the
    spans): each used to derive them again, the token reads too."""

    ttft: int | None
    ttfot: int | None
    e2e: int | None
    tpot: float | None
    reads: TokenReads


def measure(r: RequestRecord) -> Measures:
    return Measures(ttft_ns(r), ttfot_ns(r), e2e_ns(r), tpot_ns(r), token_reads(r))


def reads(r: RequestRecord) -> Iterator[tuple[int, int, int]]:
    """Token-bearing reads as ``(stamp_ns, events, tokens)``, in order."""
    runs = token_reads(r)
    return zip(runs.stamps, runs.events, runs.tokens, strict=True)


def itl_samples(r: RequestRecord) -> Iterator[tuple[int, int]]:
    """``TokenReads.itl`` as ``(per_token_gap_ns, token_count)`` pairs."""
    values, weights = token_reads(r).itl()
    return zip(values, weights, strict=True)


def chunk_gaps(r: RequestRecord) -> Iterator[int]:
    """Raw gaps between consecutive token-bearing reads (AIPerf's inter-chunk latency)."""
    return iter(token_reads(r).gaps())


def tokens_in(r: RequestRecord, start_ns: int, end_ns: int | None) -> int:
    """Output tokens whose read fell inside ``[start_ns, end_ns)`` (end None: open window)."""
    stamps = r.event_ns  # in read order, so sorted: the window is one slice
    lo = bisect_left(stamps, start_ns)
    hi = len(stamps) if end_ns is None else bisect_left(stamps, end_ns, lo)
    return sum(r.event_tokens[lo:hi]) if hi > lo else 0
