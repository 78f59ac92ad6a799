"""The fixed-timing scheduler: every request on its own clock, no batching interference.

With ``--ttft-ms X --step-ms Y`` a request's first event is written at exactly ``arrival + X``
and each later one ``Y`` after the previous deadline, whatever else is running: the timing a test
can predict to the microsecond. Deadlines of all streams live in one heap behind one timer;
everything due within ``_COALESCE_NS`` of a wake-up is written in that wake-up.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable

from llmload.sim.engine import TimerFactory
from llmload.sim.generation import Generation
from llmload.sim.model import FixedTiming
from llmload.sim.prefix_cache import PrefixCacheStats
from llmload.sim.truth import Truth

# Deadlines this close together share one wake-up: a wake costs a syscall or two, and writing
# a few microseconds early is far below anything a client on the same host can resolve.
_COALESCE_NS = 20_000


class FixedEngine:
    """Runs generations on per-request deadlines following ``FixedTiming``."""

    def __init__(
        self,
        timing: FixedTiming,
        truth: Truth,
        timer: TimerFactory,
        clock: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self.timing = timing
        self._clock = clock
        self._truth = truth
        self._timer = timer(self._on_deadline)
        self._heap: list[tuple[int, int, Generation]] = []
        self._order = itertools.count()  # ties in the heap never compare generations
        self._armed_ns: int | None = None
        self._cache_stats = PrefixCacheStats()  # fixed timing has no prefill, so no prefix cache

    @property
    def running_count(self) -> int:
        return len(self._heap)

    @property
    def waiting_count(self) -> int:
        return 0

    @property
    def kv_tokens(self) -> int:
        return sum(g.prompt_tokens + g.generated for _, _, g in self._heap)

    @property
    def cache_stats(self) -> PrefixCacheStats:
        return self._cache_stats

    def reset_prefix_cache(self) -> int:
        return 0

    def submit(self, generation: Generation) -> None:
        generation.scheduled_ns = generation.start_ns  # nothing queues under fixed timing
        deadline = generation.start_ns + self.timing.ttft_ns
        heapq.heappush(self._heap, (deadline, next(self._order), generation))
        self._arm()

    def close(self) -> None:
        self._timer.close()

    def _arm(self) -> None:
        if not self._heap:
            self._armed_ns = None
            return
        first = self._heap[0][0]
        if self._armed_ns != first:
            self._armed_ns = first
            self._timer.arm(first)

    def _on_deadline(self) -> None:
        now = self._clock()
        heap = self._heap
        if not heap or heap[0][0] > now + _COALESCE_NS:
            self._armed_ns = None
            self._arm()
            return
        lateness = now - heap[0][0]
        step_ns = self.timing.step_ns
        horizon = now + _COALESCE_NS
        while heap and heap[0][0] <= horizon:
            deadline, order, generation = heapq.heappop(heap)
            if not generation.step(now):
                heapq.heappush(heap, (deadline + step_ns, order, generation))
        self._truth.step_done(max(0, lateness), self._clock())
        self._armed_ns = None
        self._arm()
