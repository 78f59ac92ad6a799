"""The stage protocol, as a pure state machine: which load to apply and which phase we are in.

A run is a list of stages (a plain run is one; a sweep has one per concurrency level). Each stage
goes warm-up → measure → drain:

- warm-up ends once at least ``warmup_requests`` requests of the stage completed (default: its
  concurrency, so every user has been through one full request) and ``warmup_s`` passed;
- the measured window lasts ``window_s``, or until ``window_requests`` requests were sent inside
  it, whichever comes first (a count makes a run's size the same on a fast and a slow machine);
- the drain keeps the load on until every request sent inside the window finished, at most
  ``drain_s``; whatever is still in flight then is recorded as unfinished.

The controller only decides; the edge that owns it (the Locust shape on the master, or the single
process) announces each change to every process with the master's wall-clock time, and every
process tags records with the stage and phase it was told.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from llmload.core.phases import Phase
from llmload.errors import ConfigError


@dataclass(frozen=True, slots=True)
class StagePlan:
    index: int
    concurrency: int
    window_s: float
    warmup_requests: int | None = None  # None: the stage's concurrency
    warmup_s: float = 0.0
    drain_s: float = 120.0
    rate: float | None = None  # open loop: requests per second; ``concurrency`` caps in-flight
    window_requests: int | None = None  # None: the window is only timed

    def __post_init__(self) -> None:
        if self.window_requests is not None and self.window_requests < 1:
            raise ConfigError("--requests", self.window_requests, "must be 1 or more")
        if self.rate is not None and not self.rate > 0:
            raise ConfigError("--rates", self.rate, "request rates must be > 0")
        if self.concurrency < 1:
            raise ConfigError("--levels", self.concurrency, "concurrency levels must be >= 1")
        if self.window_s <= 0:
            raise ConfigError("--stage-s", self.window_s, "the measured window must be > 0 s")

    @property
    def warmup_target(self) -> int:
        if self.warmup_requests is not None:
            return self.warmup_requests
        if self.rate is not None:  # about one second of arrivals, at least one
            return max(1, min(self.concurrency, round(self.rate)))
        return self.concurrency

    @property
    def level(self) -> str:
        return f"{self.rate:g} req/s" if self.rate is not None else f"concurrency {self.concurrency}"


@dataclass(frozen=True, slots=True)
class Announcement:
    """One phase change, as broadcast to every process."""

    stage: int
    phase: Phase
    wall_time: float  # the announcer's time.time(), for lateness and cross-host alignment
    concurrency: int
    rate: float | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """What the fleet reports about the current stage."""

    completed: int  # requests of this stage that finished (any phase)
    in_flight_measured: int  # requests sent inside this stage's window, not yet finished
    sent_measured: int = 0  # requests sent inside this stage's window


def sweep_plans(
    levels: list[int],
    *,
    window_s: float,
    warmup_requests: int | None = None,
    warmup_s: float = 0.0,
    drain_s: float = 120.0,
    repeat: int = 1,
    rates: list[float] | None = None,
    max_in_flight: int = 1024,
    window_requests: int | None = None,
) -> list[StagePlan]:
    """One plan per level and repeat: concurrency levels, or request rates when given."""
    if not levels and not rates:
        raise ConfigError("--levels", levels, "give at least one concurrency level")
    if repeat < 1:
        raise ConfigError("--repeat", repeat, "must be >= 1")
    steps: list[tuple[int, float | None]] = (
        [(max_in_flight, rate) for rate in rates] if rates else [(c, None) for c in levels]
    )
    shared = StagePlan(0, 1, window_s, warmup_requests, warmup_s, drain_s, window_requests=window_requests)
    plans: list[StagePlan] = []
    for concurrency, rate in steps:
        for _ in range(repeat):
            plans.append(replace(shared, index=len(plans), concurrency=concurrency, rate=rate))
    return plans


def ramp_plans(
    levels: list[int],
    *,
    window_s: float,
    warmup_requests: int | None = None,
    warmup_s: float = 0.0,
    drain_s: float = 120.0,
    rates: list[float] | None = None,
    max_in_flight: int = 1024,
    window_requests: int | None = None,
) -> list[StagePlan]:
    """A ramp: one short stage per step, a sweep whose steps after the first have no warm-up.

    The first step warms up as any stage does (connections, a cold server). A later step's
    load is the last step's, already running, plus its new users (or arrivals): its cold start
    is what a ramp measures, so its window opens at once. The drain stays: a step ends once the
    requests sent in its window finished, so every step's numbers are whole.
    """
    plans = sweep_plans(
        levels,
        window_s=window_s,
        warmup_requests=warmup_requests,
        warmup_s=warmup_s,
        drain_s=drain_s,
        rates=rates,
        max_in_flight=max_in_flight,
        window_requests=window_requests,
    )
    return plans[:1] + [replace(p, warmup_requests=0, warmup_s=0.0) for p in plans[1:]]


class StageController:
    """Steps through the plans; ``tick`` is called periodically with fresh progress.

    ``stop_after``: asked once a level's last stage has drained, with the plans still to run;
    True ends the run there (``--until-saturated``). A level's repeats all run first: the
    question is about a level, and its spread needs every repeat.
    """

    def __init__(
        self, plans: list[StagePlan], stop_after: Callable[[list[StagePlan]], bool] | None = None
    ) -> None:
        self.plans = plans
        self._index = 0
        self._phase = Phase.WARMUP
        self._phase_started: float | None = None
        self._stop_after = stop_after
        self.not_run: list[StagePlan] = []  # the plans stop_after skipped

    @property
    def current(self) -> StagePlan | None:
        return self.plans[self._index] if self._index < len(self.plans) else None

    @property
    def phase(self) -> Phase:
        return self._phase

    def tick(self, now: float, progress: Progress, *, same_load: bool = False) -> Announcement | None:
        """Advance if the current phase is over; return the new phase's announcement.

        ``same_load``: change only what starts or stops no user. A drained stage followed by a
        stage of other users (or by the end) stays in its drain: the caller cannot start them."""
        plan = self.current
        if plan is None:
            return None
        if self._phase_started is None:
            self._phase_started = now
            return Announcement(plan.index, self._phase, now, plan.concurrency, plan.rate)
        elapsed = now - self._phase_started
        if self._phase is Phase.WARMUP:
            if progress.completed >= plan.warmup_target and elapsed >= plan.warmup_s:
                return self._enter(Phase.MEASURE, now)
        elif self._phase is Phase.MEASURE:
            counted = plan.window_requests is not None and progress.sent_measured >= plan.window_requests
            if counted or elapsed >= plan.window_s:
                return self._enter(Phase.DRAIN, now)
        elif self._phase is Phase.DRAIN and (progress.in_flight_measured == 0 or elapsed >= plan.drain_s):
            if same_load and not self._same_users_follow(self._index):
                return None
            self._index += 1
            if self._stops_here():
                self.not_run, self._index = self.plans[self._index :], len(self.plans)
            if self.current is None:
                self._phase = Phase.DONE
                return Announcement(plan.index, Phase.DONE, now, plan.concurrency, plan.rate)
            return self._enter(Phase.WARMUP, now)
        return None

    def deadline(self) -> float | None:
        """When the current phase's own time runs out (a window's end, a warm-up's or a
        drain's longest), where it has one: a ticker that wakes then, rather than at its next
        interval, closes a window on time instead of late by its sleeps' drift."""
        plan = self.current
        if plan is None or self._phase_started is None:
            return None
        limit = {Phase.WARMUP: plan.warmup_s, Phase.MEASURE: plan.window_s, Phase.DRAIN: plan.drain_s}.get(
            self._phase
        )
        if limit is None or math.isinf(limit):
            return None
        return self._phase_started + limit

    def _same_users_follow(self, position: int) -> bool:
        """The plan after ``position`` runs the same users: a repeat of its level, or the next
        rate of an open-loop sweep (whose users, one per process, send whatever rate the stage
        says)."""
        if position + 1 >= len(self.plans):
            return False
        plan, following = self.plans[position], self.plans[position + 1]
        open_loop = plan.rate is not None
        return following.concurrency == plan.concurrency and (following.rate is not None) == open_loop

    def _repeat_follows(self, position: int) -> bool:
        """The plan after ``position`` runs the same load (a repeat of its level)."""
        if position + 1 >= len(self.plans):
            return False
        plan, following = self.plans[position], self.plans[position + 1]
        return (following.concurrency, following.rate) == (plan.concurrency, plan.rate)

    def _stops_here(self) -> bool:
        if self.current is None or self._stop_after is None or self._repeat_follows(self._index - 1):
            return False
        return self._stop_after(self.plans[self._index :])

    def retarget(self, concurrency: int, now: float) -> Announcement | None:
        """The user count of an open-ended run changed (Locust's web UI edits a running test):
        the stage at the old count ends and a new one at ``concurrency`` follows, with a
        warm-up of its own. A stage still warming up just warms up again at the new count;
        a change during the drain retargets the stage that comes after it. Sweeps (finite
        windows) ignore it: their shape sets the user count."""
        plan = self.current
        if plan is None or not math.isinf(plan.window_s) or plan.rate is not None or concurrency < 1:
            return None
        if self._phase is Phase.WARMUP:
            if concurrency == plan.concurrency:
                return None
            self.plans[self._index] = replace(plan, concurrency=concurrency)
            return self._enter(Phase.WARMUP, now)
        following = self.plans[self._index + 1] if self._index + 1 < len(self.plans) else None
        if self._phase is Phase.DRAIN and following is not None:
            self.plans[self._index + 1] = replace(following, concurrency=concurrency)
            return None
        if self._phase is not Phase.MEASURE or concurrency == plan.concurrency:
            return None
        self.plans.append(replace(plan, index=plan.index + 1, concurrency=concurrency))
        return self._enter(Phase.DRAIN, now)

    def _enter(self, phase: Phase, now: float) -> Announcement:
        self._phase = phase
        self._phase_started = now
        plan = self.current
        assert plan is not None
        return Announcement(plan.index, phase, now, plan.concurrency, plan.rate)

    def remaining_s(self, now: float) -> float:
        """A lower bound of the time left: the windows still to run."""
        plan = self.current
        if plan is None:
            return 0.0
        left = sum(p.window_s for p in self.plans[self._index + 1 :])
        if self._phase is Phase.MEASURE and self._phase_started is not None:
            return left + max(0.0, plan.window_s - (now - self._phase_started))
        return left + plan.window_s
