"""What Locust's options and the locustfile say the run's stages are: the conductor's plans.

Here, not in the engine, because it reads Locust's ``environment``: its shape class (a sweep)
and its parsed user count (a plain run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

from llmload.config.settings import RunConfig
from llmload.core.stages import Announcement, Progress, StagePlan, ramp_plans, sweep_plans
from llmload.errors import ConfigError
from llmload.locust.env import options_of
from llmload.results.summary import Level
from llmload.run.conductor import Conductor
from llmload.workload.replay import Replay
from llmload.workload.traces import load_trace

if TYPE_CHECKING:  # imported by a plain process too (trace_plan): locust patches it
    from locust.env import Environment


class _Stages(TypedDict):
    """What every stage of a sweep or ramp shares."""

    window_s: float
    warmup_requests: int | None
    warmup_s: float
    drain_s: float
    max_in_flight: int
    window_requests: int | None


def make_conductor(
    environment: Environment,
    config: RunConfig,
    announce: Callable[[Announcement], None],
    progress: Callable[[], Progress],
    levels: Callable[[], Sequence[Level]] | None = None,
) -> Conductor:
    """``levels``: the headline's levels so far, read by ``--until-saturated``."""
    phases, open_loop = config.phases, config.open_loop
    if config.trace.path is not None:
        return Conductor([trace_plan(config)], announce, progress)
    if environment.shape_class is None:
        users = options_of(environment).num_users or 1
        if open_loop.rate is not None:
            users = open_loop.max_in_flight
        return Conductor(Conductor.plain_run(users, phases, open_loop.rate), announce, progress)
    sweep = config.sweep
    stages = _Stages(
        window_s=sweep.window_s,
        warmup_requests=phases.warmup_requests,
        warmup_s=phases.warmup_s,
        drain_s=phases.drain_s,
        max_in_flight=open_loop.max_in_flight,
        window_requests=phases.window_requests,
    )
    ramp = sweep.ramp
    if ramp is None:
        plans = sweep_plans(list(sweep.levels), repeat=sweep.repeat, rates=list(sweep.rates), **stages)
    elif ramp.kind == "rate":
        plans = ramp_plans([], rates=list(ramp.levels()), **stages)
    else:
        plans = ramp_plans(list(ramp.users()), **stages)
    return Conductor(plans, announce, progress, levels if sweep.until_saturated else None)


def check_stage_options(environment: Environment, config: RunConfig) -> None:
    """A plain run has no stages to ramp through or stop early: say so before it starts."""
    if environment.shape_class is not None:
        return
    for flag, given in (
        ("--ramp", config.sweep.ramp is not None),
        ("--until-saturated", config.sweep.until_saturated),
    ):
        if given:
            raise ConfigError(
                flag, "on", "needs a sweep: run `llmload sweep`, or a locustfile with SweepShape"
            )


def trace_plan(config: RunConfig) -> StagePlan:
    """A replay is one stage: its window is the trace's (one pass, or until stopped when looped)
    at the trace's mean rate, and it has no warm-up requests, for the trace starts with the
    window (``TraceUser``); ``--warmup-s`` only delays that start."""
    trace = config.trace
    assert trace.path is not None
    replay = Replay.of(load_trace(trace.path, trace.format), trace.replay)
    phases = config.phases
    return StagePlan(
        0,
        config.open_loop.max_in_flight,
        replay.duration_s,
        warmup_requests=0,
        warmup_s=phases.warmup_s,
        drain_s=phases.drain_s,
        rate=replay.requests_per_s,
    )


def planned_concurrency(environment: Environment, config: RunConfig) -> int:
    if environment.shape_class is not None:
        return config.sweep.max_users
    return int(options_of(environment).num_users or 1)
