"""The conductor: the one place that decides phase changes and announces them.

It lives in the master (or the only process), ticks the pure ``StageController`` with the
fleet's progress and hands each ``Announcement`` to ``announce``, which applies it locally and,
in a distributed run, broadcasts it to the workers.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import gevent

from llmload.config.settings import PhaseConfig
from llmload.core.phases import Phase
from llmload.core.stages import (
    Announcement,
    Progress,
    StageController,
    StagePlan,
)
from llmload.results.saturation import detect, saturation_text
from llmload.results.summary import Level, Saturation


class Conductor:
    """``levels``: the headline's levels of the stages so far, as the summary would have them
    now; given, the sweep ends once they show saturation (``--until-saturated``), and
    ``saturation`` says where and what was not run."""

    def __init__(
        self,
        plans: list[StagePlan],
        announce: Callable[[Announcement], None],
        progress: Callable[[], Progress],
        levels: Callable[[], Sequence[Level]] | None = None,
    ) -> None:
        self.controller = StageController(plans, None if levels is None else self._saturated)
        self._levels = levels
        self.saturation: Saturation | None = None
        self._announce = announce
        self._progress = progress
        self._ticker: gevent.Greenlet[[], None] | None = None
        self._progress_greenlet: gevent.Greenlet[[], None] | None = None
        self.started = time.time()

    def _saturated(self, remaining: list[StagePlan]) -> bool:
        assert self._levels is not None
        found = detect(self._levels())
        if found is None:
            return False
        not_run = tuple(dict.fromkeys(plan.level for plan in remaining))
        self.saturation = replace(found, stopped_sweep=True, levels_not_run=not_run)
        print(f"llmload: saturated at {saturation_text(self.saturation)}", file=sys.stderr, flush=True)
        return True

    @staticmethod
    def plain_run(concurrency: int, phases: PhaseConfig, rate: float | None = None) -> list[StagePlan]:
        """A plain run: one stage whose window lasts until Locust stops the test, or until
        ``--requests`` were sent in it; then its drain lets them finish, and the run ends."""
        drain_s = 0.0 if phases.window_requests is None else phases.drain_s
        return [
            StagePlan(
                0,
                max(concurrency, 1),
                math.inf,
                phases.warmup_requests,
                phases.warmup_s,
                drain_s,
                rate,
                phases.window_requests,
            )
        ]

    def tick(self, *, same_load: bool = False) -> Announcement | None:
        """Announce what changed; a stage without warm-up (a ramp's step) opens its window in
        the same tick it begins, not a shape tick (a second) later. ``same_load``: only the
        changes that start or stop no user (see ``StageController.tick``)."""
        now = time.time()  # both at once: announcing (it writes results) takes time
        first = a = self.controller.tick(now, self._progress(), same_load=same_load)
        while a is not None:
            self._announce(a)
            if a.phase is not Phase.WARMUP:
                break
            a = self.controller.tick(now, self._progress(), same_load=same_load)
        return first

    def tick_between_shape_ticks(self, settled: Callable[[StagePlan], bool], interval_s: float = 0.1) -> None:
        """Locust ticks a shape once a second, so a phase change waits up to a second to be
        seen: with 2 s windows, most of a stage went to waiting for its warm-up and its drain
        to be noticed over. Between those ticks this one moves on the phases that start or
        stop no user (a warm-up done, a window's end, a drain followed by a repeat of its
        level or by an open-loop sweep's next rate), once Locust runs the users the current
        stage asked for (``settled``)."""

        def loop() -> None:
            while self.controller.phase is not Phase.DONE:
                self._pause(interval_s)
                plan = self.controller.current
                if plan is not None and settled(plan):
                    self.tick(same_load=True)

        self._ticker = gevent.spawn(loop)

    def _pause(self, interval_s: float) -> None:
        """Sleep until the next tick: the interval, or less where the current phase's time
        runs out sooner. Sleeping the interval after each tick's work drifts: thirty 100 ms
        ticks closed a 3 s window 27 ms late."""
        deadline, now = self.controller.deadline(), time.time()
        if deadline is not None and now < deadline < now + interval_s:
            interval_s = deadline - now
        gevent.sleep(interval_s)

    def start_ticking(
        self,
        interval_s: float = 0.1,
        users: Callable[[], int] | None = None,
        done: Callable[[], None] | None = None,
    ) -> None:
        """For plain runs, which have no LoadTestShape to tick them. ``users``: the user count
        asked for now (Locust's target, not the ramp): when it changes, a new stage begins.
        ``done``: the last stage drained (its ``--requests`` measured): the run ends there."""

        def loop() -> None:
            while self.controller.phase is not Phase.DONE:
                if users is not None:
                    self.retarget(users())
                self.tick()
                self._pause(interval_s)
            if done is not None:
                done()

        self._ticker = gevent.spawn(loop)

    def retarget(self, concurrency: int) -> Announcement | None:
        a = self.controller.retarget(concurrency, time.time())
        if a is not None:
            self._announce(a)
        return a

    def start_progress(self, tokens: Callable[[], int], interval_s: float = 5.0) -> None:
        """Print where the run is every few seconds: stage i/n, level, phase, times, tok/s.

        ``tokens`` counts output tokens received so far, in-flight requests included."""

        def loop() -> None:
            before, since = tokens(), time.time()
            while self.controller.phase is not Phase.DONE:
                gevent.sleep(interval_s)
                now, count = time.time(), tokens()
                rate = (count - before) / (now - since) if now > since else 0.0
                before, since = count, now
                print(self.progress_line(now, rate), file=sys.stderr, flush=True)

        self._progress_greenlet = gevent.spawn(loop)

    def progress_line(self, now: float, tok_per_s: float) -> str:
        c = self.controller
        plan = c.current
        if plan is None:
            return "llmload: done"
        elapsed = _clock(now - self.started)
        remaining = c.remaining_s(now)
        left = "until stopped" if math.isinf(remaining) else f"≥{_clock(remaining)} left"
        return (
            f"llmload: stage {plan.index + 1}/{len(c.plans)} · {plan.level}"
            f" · {c.phase.value} · {elapsed} elapsed, {left} · ~{tok_per_s:,.0f} tok/s"
        )

    def cut_short(self) -> bool:
        """The test stops while a sweep has stages to go: it was interrupted. (A plain run has
        no end of its own: Locust's run time or a signal ends it.)"""
        finite = all(not math.isinf(plan.window_s) for plan in self.controller.plans)
        return finite and self.controller.phase is not Phase.DONE

    def stop(self) -> None:
        """The test is stopping: close the open window now (the drain is Locust's stop)."""
        for greenlet in (self._ticker, self._progress_greenlet):
            if greenlet is not None:
                greenlet.kill(block=False)
        self._ticker = self._progress_greenlet = None
        plan = self.controller.current
        if plan is not None and self.controller.phase is Phase.MEASURE:
            self._announce(Announcement(plan.index, Phase.DRAIN, time.time(), plan.concurrency, plan.rate))


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"
