"""How many users a shape asks Locust for at a stage, and whether Locust runs them yet."""

from __future__ import annotations

from collections.abc import Callable

from locust.env import Environment
from locust.runners import STATE_RUNNING, MasterRunner, Runner

from llmload.core.stages import StagePlan
from llmload.locust.env import runner_of


def users_of(runner: Runner, plan: StagePlan) -> int:
    """A level's users; in an open-loop stage, one user per process (each sends its share of
    the schedule)."""
    if plan.rate is None:
        return plan.concurrency
    opts = runner.environment.parsed_options
    if isinstance(runner, MasterRunner) and opts is not None:
        return int(opts.expect_workers or 1)
    return 1


def settled(environment: Environment) -> Callable[[StagePlan], bool]:
    """Whether Locust runs the users a stage asked for: its shape asked for them and their
    spawning is over. Before that a warm-up's completions may be the last level's users'."""
    runner = runner_of(environment)

    def check(plan: StagePlan) -> bool:
        asked, users = runner.shape_last_tick, users_of(runner, plan)
        return runner.state == STATE_RUNNING and asked is not None and asked[0] == users == runner.user_count

    return check
