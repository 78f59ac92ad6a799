"""Finished records folded into a process's numbers while its event loop is idle.

Folding a record (its ``requests.jsonl`` line, its stage's stats and the later windows its
tokens overlap, the time series, the exporter's buckets, an OTLP span) takes 50-250 µs on a
worker whose CPU has been idling between events; done on the request path, it would delay every
other stream's read that arrives meanwhile, and those delays are ITL error (bench/accuracy.py).
So the session counts a record at once (what paces the run) and hands it here; a greenlet folds
queued records one step at a time between the loop's reads, and every reader of the numbers
calls ``drain`` first.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import gevent

from llmload.config.settings import RunConfig
from llmload.core.phases import Window
from llmload.core.record import RequestRecord
from llmload.export.results import RecordLog
from llmload.metrics import derive
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.slo import SloRule
from llmload.metrics.timeseries import TimeSeries

if TYPE_CHECKING:
    from llmload.export.otlp import RequestSpans

# Records waiting to be folded, at most: a worker whose loop is never idle folds on the
# request path rather than queue without end.
_MAX_PENDING = 256


class Folded(Protocol):
    """A stage as the fold sees it (the session's ``StageState``)."""

    stats: StageStats
    window: Window


class Fold:
    """``stages``: the session's, by index, shared: a record folds into its own stage and into
    every later stage whose window its tokens reached."""

    def __init__(self, config: RunConfig, records: RecordLog, stages: Mapping[int, Folded]) -> None:
        self._config = config
        self._records = records
        self._stages = stages
        workload = config.workload
        self._tenant_names = {t.request_name: t.name for t in workload.tenants}
        self._tenant_slo = {t.request_name: t.slo for t in workload.tenants if t.slo}
        self._wall_minus_perf_ns = time.time_ns() - time.perf_counter_ns()
        self.spans: RequestSpans | None = None  # --otlp-endpoint: a client span per request
        self.timeseries = TimeSeries()
        # exporter state, cumulative here; a worker hands deltas over with take_classic()
        self.classic: dict[int, ClassicStats] = {}
        self._pending: deque[tuple[RequestRecord, bool]] = deque()  # finished, not yet folded
        self._folder: gevent.Greenlet[[], None] | None = None
        self._folding: Iterator[None] = iter(())  # the record the folder is part way through

    @property
    def wall_minus_perf_ns(self) -> int:
        return self._wall_minus_perf_ns

    def set_clock_offset(self, offset_s: float) -> None:
        """Bin by the master's wall clock, ``offset_s`` behind this process's (``core/clock.py``)."""
        self._wall_minus_perf_ns = time.time_ns() - time.perf_counter_ns() - round(offset_s * 1e9)

    def add(self, record: RequestRecord, late: bool) -> None:
        """``late``: sent inside its stage's window, finished after the drain ended."""
        self._pending.append((record, late))
        if len(self._pending) >= _MAX_PENDING:  # the loop is never idle: fold on the request path
            self.drain()
        elif self._folder is None:
            self._folder = gevent.spawn(self._fold_when_idle)

    def drain(self) -> None:
        """Fold every record still queued: readers of stats, series and records call this."""
        for _ in self._folding:  # the one the folder greenlet left half done, if any
            pass
        pending = self._pending
        while pending:
            for _ in self._fold(*pending.popleft()):
                pass

    def close(self) -> None:
        self.drain()
        if self._folder is not None:
            self._folder.kill(block=False)
        if self.spans is not None:
            self.spans.close()

    def take_classic(self) -> dict[int, ClassicStats]:
        self.drain()
        taken, self.classic = self.classic, {}
        return taken

    def take_timeseries(self) -> TimeSeries:
        self.drain()
        taken, self.timeseries = self.timeseries, TimeSeries()
        return taken

    def _fold_when_idle(self) -> None:
        try:
            while self._pending:
                gevent.idle()  # after every read the loop has ready, one record at a time
                if self._pending:
                    self._folding = self._fold(*self._pending.popleft())
                    for _ in self._folding:
                        gevent.idle()  # and between its steps: each is tens of µs when cold
        finally:
            self._folder = None

    def _fold(self, record: RequestRecord, late: bool) -> Iterator[None]:
        """Fold one record in steps; the folder greenlet lets arrived reads go in between."""
        self._records.write(record)
        yield
        m = derive.measure(record)  # once, for every consumer below
        if self.spans is not None:
            self.spans.add(record, m)
            yield
        self.timeseries.add(record, self._wall_minus_perf_ns, m.ttft)
        if self._config.exporter.port:  # exact buckets cost ~0.5 µs per event: only when exported
            yield
            tenant = self._tenant_names.get(record.name) if record.name else None
            self.classic.setdefault(record.stage, ClassicStats()).add(record, tenant, m)
        yield
        state = self._stages[record.stage]
        if late:
            state.stats.add_late(record, state.window)
        else:
            state.stats.add(record, state.window, self._slo_of(record), m)
        self._add_tokens_to_later_windows(record)

    def _slo_of(self, r: RequestRecord) -> Sequence[SloRule]:
        """The objectives a request is judged by: its tenant's own, else the run's ``--slo``."""
        slo = self._config.checks.slo
        return self._tenant_slo.get(r.name, slo) if r.name else slo

    def _add_tokens_to_later_windows(self, r: RequestRecord) -> None:
        # A request sent in one stage can still be streaming in a later stage's window; its
        # tokens read there belong to that window's throughput.
        if not r.event_ns:
            return
        for index, state in self._stages.items():
            w = state.window
            if index <= r.stage or w.t0_ns is None or w.t0_ns > r.event_ns[-1]:
                continue
            state.stats.add_tokens_read_in_window(r, w)
