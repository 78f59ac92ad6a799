"""--ramp's spec and plans, and the controller's early stop (--until-saturated)."""

from __future__ import annotations

import pytest

from llmload.config.settings import SweepConfig
from llmload.core.phases import Phase
from llmload.core.stages import Progress, StageController, StagePlan, ramp_plans, sweep_plans
from llmload.errors import ConfigError
from llmload.workload.ramps import Ramp, parse_ramp


def test_a_users_ramp_steps_from_from_to_to_and_ends_on_to() -> None:
    ramp = parse_ramp("1:64:8")
    assert ramp == Ramp("users", 1, 64, 8)
    assert ramp.users() == (1, 9, 17, 25, 33, 41, 49, 57, 64)
    assert parse_ramp("users:2:4") == Ramp("users", 2, 4, 1)  # a linear ramp: one user a step
    assert parse_ramp(None) is None and parse_ramp("") is None


def test_a_rate_ramp_steps_by_index_not_by_sum() -> None:
    assert parse_ramp("rate:0.1:0.3:0.1").levels() == (0.1, 0.2, 0.3)  # type: ignore[union-attr]
    assert parse_ramp("rate:1:4:1.5").levels() == (1.0, 2.5, 4.0)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("64", "FROM:TO"),
        ("1:x:2", "FROM:TO"),
        ("8:4", "FROM <= TO"),
        ("1:8:0", "STEP > 0"),
        ("1:8:1.5", "whole users"),
        ("1:100000", "larger STEP"),
    ],
)
def test_a_bad_ramp_names_the_flag_and_the_form(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        parse_ramp(text)
    assert caught.value.option == "--ramp"


def test_a_ramp_replaces_rates_and_repeats() -> None:
    with pytest.raises(ConfigError, match="--rates"):
        SweepConfig(rates=(1.0,), ramp=Ramp("rate", 1, 4))
    with pytest.raises(ConfigError, match="--repeat"):
        SweepConfig(repeat=2, ramp=Ramp("users", 1, 4))
    assert SweepConfig(ramp=Ramp("users", 1, 48, 16)).max_users == 48


def test_ramp_steps_after_the_first_have_no_warmup() -> None:
    plans = ramp_plans([1, 3, 5], window_s=2, warmup_requests=4, warmup_s=1.0)
    assert [(p.concurrency, p.warmup_target, p.warmup_s) for p in plans] == [
        (1, 4, 1.0),
        (3, 0, 0.0),
        (5, 0, 0.0),
    ]
    rates = ramp_plans([], rates=[1.0, 2.0], window_s=2, max_in_flight=64)
    assert [(p.rate, p.concurrency, p.warmup_target) for p in rates] == [(1.0, 64, 1), (2.0, 64, 0)]


def run(c: StageController) -> list[tuple[int, str]]:
    """Tick the controller to the end: every warm-up done, every drain empty."""
    seen = []
    now = 0.0
    while c.phase is not Phase.DONE:
        a = c.tick(now, Progress(completed=10_000, in_flight_measured=0))
        if a is not None:
            seen.append((a.stage, a.phase.value))
        now += 100
    return seen


def test_stop_after_is_asked_at_level_boundaries_only_and_ends_the_run() -> None:
    asked: list[list[StagePlan]] = []

    def stop_after(remaining: list[StagePlan]) -> bool:
        asked.append(remaining)
        return len(asked) == 2  # saturated once the second level has drained

    plans = sweep_plans([1, 2, 4, 8], window_s=5, repeat=2)
    c = StageController(plans, stop_after)
    seen = run(c)
    # asked after C=1's second repeat and after C=2's, never between repeats
    assert [[p.concurrency for p in r] for r in asked] == [[2, 2, 4, 4, 8, 8], [4, 4, 8, 8]]
    assert [p.concurrency for p in c.not_run] == [4, 4, 8, 8]
    assert max(stage for stage, _ in seen) == 3 and seen[-1] == (3, "done")


def test_without_stop_after_every_stage_runs() -> None:
    c = StageController(sweep_plans([1, 2], window_s=5))
    assert run(c)[-1] == (1, "done") and c.not_run == []
