"""``TraceUser``: a trace's requests, each sent at its own time (trace replay, open loop).

One per process, as ``OpenLoopUser`` (whose sending loop it is): it takes every n-th request of
the replay (``workload/replay.py``), the same split as the arrivals', and builds each prompt when
it is due (``workload/trace_prompts.py``), so a trace of long prompts is never held in memory as
text. Its schedule starts with the stage's measured window, which the replay's stage opens at
once (``plans.trace_plan``: no warm-up requests), and the run ends when the last request of the
trace has finished, unless ``--trace-loop`` replays it until Locust's run time ends.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import ClassVar

from locust.env import Environment

from llmload.locust.openloop import OpenLoopUser
from llmload.run.process_run import StageState
from llmload.workload.prompts import Prompt
from llmload.workload.replay import Replay
from llmload.workload.trace_prompts import TracePrompts
from llmload.workload.traces import load_trace


class TraceUser(OpenLoopUser):
    scenario: ClassVar[str] = "trace"
    mixes_tenants: ClassVar[bool] = False

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        config = self._session.config
        path = config.trace.path
        assert path is not None, "to_config requires --trace for the trace scenario"
        trace = load_trace(path, config.trace.format)
        self._replay = Replay.of(trace, config.trace.replay)
        self._prompts = TracePrompts(trace, config.workload.seed, config.workload.salt)

    def start_ns(self, state: StageState) -> int | None:
        return state.window.t0_ns  # the measured window's start, back-dated as every process's

    def arrivals(self, stage: int, state: StageState) -> Iterator[tuple[float, Callable[[], Prompt]]]:
        entries, prompts = self._replay.entries, self._prompts
        for offset, repeat, index in self._replay.schedule(*self._share):
            yield offset, functools.partial(prompts.get, entries[index], index, repeat)
