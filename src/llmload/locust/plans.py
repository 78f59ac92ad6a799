"""What Locust's options and the locustfile say the run's stages are: the conductor's plans.

Here, not in the engine, because it reads Locust's ``environment``: its shape class (a sweep)
and its parsed user count (a plain run).
"""

from __future__ import annotations

from typing import Any

from llmload.config import RunConfig
from llmload.run.conductor import Conductor
from llmload.stages import sweep_plans


def make_conductor(environment: Any, config: RunConfig, announce: Any, progress: Any) -> Conductor:
    phases, open_loop = config.phases, config.open_loop
    if environment.shape_class is None:
        users = environment.parsed_options.num_users or 1
        if open_loop.rate is not None:
            users = open_loop.max_in_flight
        plans = Conductor.plain_run(users, phases.warmup_requests, phases.warmup_s, open_loop.rate)
        return Conductor(plans, announce, progress)
    sweep = config.sweep
    plans = sweep_plans(
        list(sweep.levels),
        window_s=sweep.window_s,
        warmup_requests=phases.warmup_requests,
        warmup_s=phases.warmup_s,
        drain_s=phases.drain_s,
        repeat=sweep.repeat,
        rates=list(sweep.rates),
        max_in_flight=open_loop.max_in_flight,
    )
    return Conductor(plans, announce, progress)


def planned_concurrency(environment: Any, config: RunConfig) -> int:
    if environment.shape_class is not None:
        return max(config.sweep.levels)
    return int(environment.parsed_options.num_users or 1)
