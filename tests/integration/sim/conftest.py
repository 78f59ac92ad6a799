"""Fixtures: real simulators in child processes on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from llmload.sim.process import SimProcess, start_sim

SimFactory = Callable[..., SimProcess]


@pytest.fixture
def sim_factory() -> Iterator[SimFactory]:
    """Start simulators with the given arguments; all are stopped at teardown."""
    started: list[SimProcess] = []

    def start(*args: str) -> SimProcess:
        sim = start_sim(args)
        started.append(sim)
        return sim

    yield start
    for sim in started:
        sim.stop()


def _module_sim(args: Sequence[str]) -> Iterator[SimProcess]:
    sim = start_sim(args)
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture(scope="module")
def fast_sim() -> Iterator[SimProcess]:
    """Fixed timing, fast: first token after 5 ms, then an event every 5 ms."""
    yield from _module_sim(["--ttft-ms", "5", "--step-ms", "5", "--seed", "7"])
