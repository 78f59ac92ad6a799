"""The conductor: the one place that decides phase changes and announces them.

It lives in the master (or the only process), ticks the pure ``StageController`` with the
fleet's progress and hands each ``Announcement`` to ``announce``, which applies it locally and,
in a distributed run, broadcasts it to the workers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import gevent

from llmload.stages import Announcement, Progress, StageController, StagePhase, StagePlan


class Conductor:
    def __init__(
        self,
        plans: list[StagePlan],
        announce: Callable[[Announcement], None],
        progress: Callable[[], Progress],
    ) -> None:
        self.controller = StageController(plans)
        self._announce = announce
        self._progress = progress
        self._ticker: gevent.Greenlet[Any, None] | None = None
        self.started = time.time()

    @classmethod
    def single_stage(cls, concurrency: int, warmup_requests: int | None, warmup_s: float,
                     announce: Callable[[Announcement], None],
                     progress: Callable[[], Progress]) -> Conductor:
        """A plain run: one stage whose window lasts until Locust stops the test."""
        plan = StagePlan(0, max(concurrency, 1), math.inf, warmup_requests, warmup_s, 0.0)
        return cls([plan], announce, progress)

    def tick(self) -> Announcement | None:
        a = self.controller.tick(time.time(), self._progress())
        if a is not None:
            self._announce(a)
        return a

    def start_ticking(self, interval_s: float = 0.1) -> None:
        """For plain runs, which have no LoadTestShape to tick them."""
        def loop() -> None:
            while self.controller.phase is not StagePhase.DONE:
                self.tick()
                gevent.sleep(interval_s)

        self._ticker = gevent.spawn(loop)

    def stop(self) -> None:
        """The test is stopping: close the open window now (the drain is Locust's stop)."""
        if self._ticker is not None:
            self._ticker.kill(block=False)
            self._ticker = None
        plan = self.controller.current
        if plan is not None and self.controller.phase is StagePhase.MEASURE:
            self._announce(Announcement(plan.index, StagePhase.DRAIN, time.time(), plan.concurrency))
