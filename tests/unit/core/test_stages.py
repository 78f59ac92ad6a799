"""The stage state machine: warm-up, window, drain, next stage."""

from __future__ import annotations

import math

import pytest

from llmload.core.phases import Phase
from llmload.core.stages import Announcement, Progress, StageController, StagePlan, sweep_plans
from llmload.errors import ConfigError


def test_sweep_walks_warmup_window_drain_per_level() -> None:
    c = StageController(sweep_plans([1, 4], window_s=10, drain_s=5))
    seen = []

    def tick(now: float, completed: int = 0, in_flight: int = 0) -> None:
        a = c.tick(now, Progress(completed, in_flight))
        if a is not None:
            seen.append((now, a.stage, a.phase.value, a.concurrency))

    tick(0)  # stage 0 warm-up announced
    tick(1, completed=0)  # warm-up needs 1 completed request
    tick(2, completed=1)  # -> measure
    tick(11, completed=5)  # window not over
    tick(12, completed=6, in_flight=1)  # -> drain
    tick(13, completed=6, in_flight=1)  # still one in flight
    tick(14, completed=7, in_flight=0)  # -> stage 1 warm-up
    tick(15, completed=3)  # warm-up needs 4
    tick(16, completed=4)  # -> measure
    tick(26, completed=9)  # -> drain
    tick(40, in_flight=3)  # the drain bound (5 s) passed -> done
    assert seen == [
        (0, 0, "warmup", 1),
        (2, 0, "measure", 1),
        (12, 0, "drain", 1),
        (14, 1, "warmup", 4),
        (16, 1, "measure", 4),
        (26, 1, "drain", 4),
        (40, 1, "done", 4),
    ]
    assert c.phase is Phase.DONE and c.current is None


def test_repeat_duplicates_levels_and_bad_levels_name_the_option() -> None:
    plans = sweep_plans([1, 2], window_s=5, repeat=2)
    assert [p.concurrency for p in plans] == [1, 1, 2, 2]
    assert [p.index for p in plans] == [0, 1, 2, 3]
    with pytest.raises(ConfigError, match="--levels"):
        sweep_plans([0], window_s=5)
    with pytest.raises(ConfigError, match="--stage-s"):
        sweep_plans([1], window_s=0)


def test_a_window_of_n_requests_closes_once_n_were_sent_in_it_or_its_time_is_up() -> None:
    open_ended = StagePlan(0, 2, math.inf, drain_s=60, window_requests=4)
    timed = StagePlan(1, 2, 10, drain_s=60, window_requests=4)
    c = StageController([open_ended, timed])
    phases = []
    for now, progress in [
        (0, Progress(0, 0)),
        (1, Progress(2, 0)),  # -> measure
        (500, Progress(5, 2, sent_measured=3)),  # no time limit: it waits for the fourth
        (501, Progress(6, 2, sent_measured=4)),  # -> drain
        (502, Progress(8, 0, sent_measured=5)),  # the four finished -> stage 1 warm-up
        (503, Progress(2, 0)),  # -> measure
        (513, Progress(4, 2, sent_measured=2)),  # its 10 s are up first -> drain
    ]:
        a = c.tick(now, progress)
        if a is not None:
            phases.append((now, a.stage, a.phase.value))
    assert phases == [
        (0, 0, "warmup"),
        (1, 0, "measure"),
        (501, 0, "drain"),
        (502, 1, "warmup"),
        (503, 1, "measure"),
        (513, 1, "drain"),
    ]
    with pytest.raises(ConfigError, match="--requests"):
        StagePlan(0, 1, 10, window_requests=0)


def test_remaining_time_counts_windows_left() -> None:
    c = StageController(sweep_plans([1, 2, 4], window_s=10))
    c.tick(0, Progress(0, 0))
    assert c.remaining_s(0) == 30
    c.tick(1, Progress(1, 0))
    assert c.remaining_s(5) == 26


def test_the_deadline_is_when_the_current_phases_own_time_runs_out() -> None:
    c = StageController(sweep_plans([1, 2], window_s=10, drain_s=5))
    assert c.deadline() is None  # nothing announced yet
    c.tick(100, Progress(0, 0))
    assert c.deadline() == 100  # a warm-up of no time: it waits on its requests alone
    c.tick(101, Progress(1, 0))
    assert c.phase is Phase.MEASURE and c.deadline() == 111
    c.tick(111, Progress(3, 1))
    assert c.phase is Phase.DRAIN and c.deadline() == 116
    open_ended = StageController([StagePlan(0, 2, math.inf)])
    open_ended.tick(0, Progress(0, 0))
    open_ended.tick(1, Progress(2, 0))
    assert open_ended.phase is Phase.MEASURE and open_ended.deadline() is None  # until stopped


def test_a_user_count_change_in_an_open_ended_run_starts_a_new_stage() -> None:
    """Locust's web UI edits a running test: the window at the old count closes, the requests
    it sent drain, and a stage at the new count warms up and measures on its own."""
    c = StageController([StagePlan(0, 4, math.inf, drain_s=5)])
    seen = []

    def step(now: float, a: Announcement | None) -> None:
        if a is not None:
            seen.append((now, a.stage, a.phase.value, a.concurrency))

    step(0, c.tick(0, Progress(0, 0)))
    step(1, c.retarget(2, 1))  # still warming up: warm up again at 2
    step(2, c.tick(2, Progress(2, 0)))  # -> measure at 2
    assert c.retarget(2, 3) is None  # no change, no stage
    step(10, c.retarget(8, 10))  # -> drain of stage 0
    assert c.retarget(6, 11) is None  # during the drain: the next stage's count
    step(12, c.tick(12, Progress(9, 0)))  # drained -> stage 1 warm-up at 6
    step(13, c.tick(13, Progress(6, 0)))  # -> measure
    assert [p.concurrency for p in c.plans] == [2, 6]
    assert seen == [
        (0, 0, "warmup", 4),
        (1, 0, "warmup", 2),
        (2, 0, "measure", 2),
        (10, 0, "drain", 2),
        (12, 1, "warmup", 6),
        (13, 1, "measure", 6),
    ]


def test_sweeps_and_open_loop_stages_ignore_user_count_changes() -> None:
    sweep = StageController(sweep_plans([1, 4], window_s=10))
    sweep.tick(0, Progress(0, 0))
    sweep.tick(1, Progress(1, 0))
    assert sweep.retarget(8, 2) is None and len(sweep.plans) == 2
    open_loop = StageController([StagePlan(0, 64, math.inf, rate=5.0)])
    open_loop.tick(0, Progress(0, 0))
    open_loop.tick(1, Progress(5, 0))
    assert open_loop.retarget(1, 2) is None and len(open_loop.plans) == 1


def test_a_tick_between_shape_ticks_moves_on_to_a_repeat_but_not_to_another_level() -> None:
    """The conductor's fast ticks change only what starts or stops no user: a drained stage
    goes on to its level's repeat, but waits in its drain for Locust's own tick before a new
    level (whose users only the shape can start) and before the end."""
    c = StageController(sweep_plans([2, 4], window_s=10, drain_s=60, repeat=2))
    seen = []

    def tick(now: float, progress: Progress, *, same_load: bool = True) -> None:
        a = c.tick(now, progress, same_load=same_load)
        if a is not None:
            seen.append((now, a.stage, a.phase.value, a.concurrency))

    tick(0, Progress(0, 0), same_load=False)  # the shape's first tick
    tick(1, Progress(2, 0))  # -> measure
    tick(11, Progress(9, 2))  # -> drain
    tick(12, Progress(10, 0))  # drained: the repeat at 2 users follows -> stage 1 warm-up
    tick(13, Progress(2, 0))  # -> measure
    tick(23, Progress(9, 1))  # -> drain
    tick(24, Progress(10, 0))  # drained, but 4 users follow: held
    tick(25, Progress(10, 0))  # still held
    tick(26, Progress(10, 0), same_load=False)  # the shape's tick -> stage 2 warm-up at 4
    tick(27, Progress(4, 0))  # -> measure
    tick(37, Progress(9, 1))  # -> drain
    tick(38, Progress(10, 0))  # -> stage 3 warm-up (a repeat)
    tick(39, Progress(4, 0))  # -> measure
    tick(49, Progress(9, 1))  # -> drain
    tick(50, Progress(10, 0))  # drained, the end follows: held for the shape
    tick(51, Progress(10, 0), same_load=False)  # -> done
    assert [(now, stage, phase) for now, stage, phase, _ in seen] == [
        (0, 0, "warmup"), (1, 0, "measure"), (11, 0, "drain"),
        (12, 1, "warmup"), (13, 1, "measure"), (23, 1, "drain"),
        (26, 2, "warmup"), (27, 2, "measure"), (37, 2, "drain"),
        (38, 3, "warmup"), (39, 3, "measure"), (49, 3, "drain"),
        (51, 3, "done"),
    ]  # fmt: skip


def test_between_shape_ticks_an_open_loop_sweep_moves_on_to_its_next_rate() -> None:
    """An open-loop stage's users are one per process whatever its rate: the next rate needs
    nothing of Locust, so a fast tick starts it; the end still waits for the shape's tick."""
    c = StageController(sweep_plans([], window_s=10, drain_s=60, rates=[2.0, 4.0], max_in_flight=64))
    seen = []
    for now, progress, same_load in [
        (0, Progress(0, 0), False),
        (1, Progress(2, 0), True),  # -> measure
        (11, Progress(9, 2), True),  # -> drain
        (12, Progress(10, 0), True),  # drained -> the 4 req/s stage warms up
        (13, Progress(4, 0), True),  # -> measure
        (23, Progress(9, 1), True),  # -> drain
        (24, Progress(10, 0), True),  # drained, the end follows: held
    ]:
        a = c.tick(now, progress, same_load=same_load)
        if a is not None:
            seen.append((now, a.stage, a.phase.value, a.rate))
    assert seen == [
        (0, 0, "warmup", 2.0), (1, 0, "measure", 2.0), (11, 0, "drain", 2.0),
        (12, 1, "warmup", 4.0), (13, 1, "measure", 4.0), (23, 1, "drain", 4.0),
    ]  # fmt: skip
