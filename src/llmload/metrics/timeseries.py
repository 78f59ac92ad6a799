"""Per-second series of a run, mergeable across processes: what ``timeseries.csv`` plots.

Bins are whole seconds of wall-clock time (``int(time.time())``), so the bins of different
processes line up without sharing a monotonic clock. Tokens land in the second their read
happened, requests in the second they finished, TTFT in the second the request was sent.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from typing import TypeAlias

from llmload.core.record import OK, UNFINISHED, RequestRecord
from llmload.metrics.histogram import LogHistogram

_NS = 1_000_000_000
# One second of the series: a line of timeseries.csv and of the web UI's timeline.
TimeRow: TypeAlias = dict[str, int | float | str | None]


@dataclass(slots=True)
class TimeSeries:
    tokens: Counter[int] = field(default_factory=Counter)
    ok: Counter[int] = field(default_factory=Counter)
    errors: Counter[int] = field(default_factory=Counter)
    in_flight: Counter[int] = field(default_factory=Counter)  # summed over processes
    ttft: dict[int, LogHistogram] = field(default_factory=dict)

    def add(self, r: RequestRecord, wall_minus_perf_ns: int, ttft_ns: int | None) -> None:
        """Fold one record; ``wall_minus_perf_ns`` converts this process's stamps to wall time;
        ``ttft_ns``: the record's, as the fold derived it."""

        def second(t_ns: int) -> int:
            return (t_ns + wall_minus_perf_ns) // _NS

        stamps, counts = r.event_ns, r.event_tokens
        lo, n = 0, len(stamps)
        while lo < n:  # the stamps are in read order: one slice per wall-clock second
            sec = second(stamps[lo])
            hi = bisect_left(stamps, (sec + 1) * _NS - wall_minus_perf_ns, lo)
            self.tokens[sec] += sum(counts[lo:hi])
            lo = hi
        if not r.stream and r.done_ns is not None:
            self.tokens[second(r.done_ns)] += r.output_tokens
        if r.done_ns is not None and r.outcome != UNFINISHED:
            (self.ok if r.outcome == OK else self.errors)[second(r.done_ns)] += 1
        if ttft_ns is not None and r.sent_ns is not None and r.outcome == OK:
            self.ttft.setdefault(second(r.sent_ns), LogHistogram()).add(ttft_ns)

    def sample_in_flight(self, wall_s: float, count: int) -> None:
        self.in_flight[int(wall_s)] = count

    def merge(self, other: TimeSeries) -> None:
        self.tokens.update(other.tokens)
        self.ok.update(other.ok)
        self.errors.update(other.errors)
        self.in_flight.update(other.in_flight)
        for sec, h in other.ttft.items():
            self.ttft.setdefault(sec, LogHistogram()).merge(h)

    def is_empty(self) -> bool:
        return not (self.tokens or self.ok or self.errors or self.in_flight or self.ttft)

    def rows(self, phases: list[tuple[float, int, str]], last: int | None = None) -> list[TimeRow]:
        """One row per second from the first to the last active second (``last``: only the
        latest that many). ``phases`` is the run's announcements as (wall time, stage, phase),
        in order."""
        seconds = set(self.tokens) | set(self.ok) | set(self.errors) | set(self.in_flight)
        if not seconds:
            return []
        start, end = min(seconds), max(seconds)
        first = start if last is None else max(start, end - last + 1)
        rows: list[TimeRow] = []
        for sec in range(first, end + 1):
            stage, phase = -1, ""
            for wall, s, p in phases:
                if wall <= sec + 0.5:  # the phase in effect for most of the second
                    stage, phase = s, p
            h = self.ttft.get(sec)
            p50 = h.quantile(0.5) if h is not None else None
            rows.append(
                {
                    "t_s": sec - start,
                    "wall_s": sec,
                    "stage": stage,
                    "phase": phase,
                    "output_tok_per_s": self.tokens.get(sec, 0),
                    "in_flight": self.in_flight.get(sec, 0),
                    "requests_ok": self.ok.get(sec, 0),
                    "errors": self.errors.get(sec, 0),
                    "ttft_p50_ms": None if p50 is None else round(p50 / 1e6, 3),
                }
            )
        return rows
