"""The stage state machine: warm-up, window, drain, next stage."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.phases import Phase
from llmload.stages import Progress, StageController, sweep_plans


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


def test_remaining_time_counts_windows_left() -> None:
    c = StageController(sweep_plans([1, 2, 4], window_s=10))
    c.tick(0, Progress(0, 0))
    assert c.remaining_s(0) == 30
    c.tick(1, Progress(1, 0))
    assert c.remaining_s(5) == 26
