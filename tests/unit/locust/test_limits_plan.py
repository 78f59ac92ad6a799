"""What a plan's Locust options say each process holds at its peak (locust/limits.py): a plain
run's users, a sweep's largest level, an open loop's in-flight cap, a worker's share."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any, cast

import configargparse  # type: ignore[import-untyped]

from llmload.config.args import add_options, to_config
from llmload.config.settings import RunConfig
from llmload.core.limits import Need, Streams
from llmload.locust.limits import PLANNED_USERS, streams, worker_need

TARGET = "127.0.0.1:9"


def config(*argv: str) -> RunConfig:
    parser = configargparse.ArgumentParser(prog="locust")
    add_options(parser)
    parser.add_argument("--host", default=f"http://{TARGET}")
    return to_config(parser.parse_args(list(argv)))


def env(*, shape: bool = False, **options: object) -> Any:
    return cast(
        Any,
        SimpleNamespace(shape_class=object if shape else None, parsed_options=argparse.Namespace(**options)),
    )


def test_a_plain_run_holds_its_users_and_an_agent_its_sub_agents_too() -> None:
    assert streams(env(), config(), 200) == Streams(users=200)
    assert streams(env(), config("--fan-out", "3"), 200) == Streams(users=800)


def test_an_open_loop_run_holds_up_to_its_in_flight_cap_in_every_process() -> None:
    assert streams(env(), config("--rate", "5", "--max-in-flight", "64"), None) == Streams(in_flight=64)


def test_a_sweep_is_planned_by_its_largest_level_or_its_rates_cap() -> None:
    assert streams(env(shape=True), config("--levels", "1,8,300,64"), None) == Streams(users=300)
    rates = config("--rates", "1,2", "--max-in-flight", "50")
    assert streams(env(shape=True), rates, None) == Streams(in_flight=50)


def test_a_worker_takes_its_share_of_the_masters_users() -> None:
    worker = env(expect_workers=4, processes=None, **{PLANNED_USERS: 1000})
    assert worker_need(worker, config()) == Need(250, TARGET, 1, shared=1000)
    forked = env(expect_workers=2, processes=2, **{PLANNED_USERS: 201})
    assert worker_need(forked, config()) == Need(101, TARGET, 2, shared=201)
    assert worker_need(env(expect_workers=2, processes=None), config()) is None  # not said
