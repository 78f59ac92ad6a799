"""The plan's connections checked against the limits (``core/limits.py``) where Locust's runner
says how the streams are shared out: a plain run holds them all in one process; a
``--processes`` master checks for the workers it forked on this host before they hear of any
users; a worker checks its own share when the master's first spawn message reaches it.

A worker's share comes from the master: Locust sends its workers the master's own options with
every spawn message, but not ``-u``, so the master adds the plan's users to them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from llmload.config.settings import RunConfig
from llmload.core.limits import Need, Streams, destination
from llmload.locust.env import options_of
from llmload.run.limits import ensure

if TYPE_CHECKING:  # importing locust patches the process: leave that to the plugin
    from locust.env import Environment

PLANNED_USERS = "llmload_planned_users"  # the master's options, as its workers receive them
REFUSED = "llmload_refused"  # a worker's refusal, to the master


def streams(environment: Environment, config: RunConfig, users: int | None) -> Streams:
    """The plan's peak: ``users`` is ``-u`` (the master's, on a worker). An agent whose session
    fans out holds its own connection while each sub-agent streams on one of its own."""
    in_flight = config.open_loop.max_in_flight
    per_user = 1 + config.workload.agent.fan_out
    if config.trace.path is not None:
        return Streams(in_flight=in_flight)
    if environment.shape_class is None:
        if config.open_loop.rate is not None:
            return Streams(in_flight=in_flight)
        return Streams(users=(users or 1) * per_user)
    sweep = config.sweep
    if sweep.rates or (sweep.ramp is not None and sweep.ramp.kind == "rate"):
        return Streams(in_flight=in_flight)
    return Streams(users=sweep.max_users * per_user)


def _destination(config: RunConfig) -> str:
    return destination(config.transport.base_url)


def _say(line: str | None) -> None:
    if line is not None:
        print(f"llmload: {line}", file=sys.stderr, flush=True)


def check_local(environment: Environment, config: RunConfig) -> None:
    """A plain run: every stream in this process. Raises ``PlanError``."""
    planned = streams(environment, config, options_of(environment).num_users)
    _say(ensure(planned.need(_destination(config))))


def check_master(environment: Environment, config: RunConfig) -> None:
    """Tell the workers the plan; with ``--processes``, check the host they share for them: each
    was forked with this process's limits, and raises its own soft limit when it starts."""
    options = options_of(environment)
    users = options.num_users
    setattr(options, PLANNED_USERS, users)
    forked = int(getattr(options, "processes", None) or 0)
    if forked > 0:
        need = streams(environment, config, users).need(_destination(config), workers=forked, here=forked)
        ensure(need, raise_soft=False)


def worker_need(environment: Environment, config: RunConfig) -> Need | None:
    """This worker's share of the master's plan; None from a master that did not say it."""
    options = options_of(environment)
    users = getattr(options, PLANNED_USERS, None)
    if users is None and environment.shape_class is None and config.open_loop.rate is None:
        return None
    workers = int(options.expect_workers or 1)
    # Workers forked by one `locust --processes N` share this host; one started alone, as far
    # as it can know, does not.
    here = int(getattr(options, "processes", None) or 1)
    return streams(environment, config, users).need(_destination(config), workers=workers, here=here)


def check_worker(environment: Environment, config: RunConfig) -> None:
    """A worker's own share. Raises ``PlanError``."""
    need = worker_need(environment, config)
    if need is not None:
        _say(ensure(need))
