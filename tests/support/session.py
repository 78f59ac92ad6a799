"""A worker's ``ProcessRun`` outside Locust, for tests of what happens around a request.

Its host is a closed port: nothing here connects (the model is given, so ``start`` is not
called); transports in the tests stand in for the server.
"""

from __future__ import annotations

import time
from pathlib import Path

from llmload.config.asked import RequestConfig, WorkloadConfig
from llmload.config.settings import PhaseConfig, RunConfig, TransportConfig
from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.core.timeouts import Timeouts
from llmload.run.process_run import ProcessRun

URL = "http://127.0.0.1:9"


def config(results_dir: Path, host: str = URL) -> RunConfig:
    """Records go to ``results_dir/run``."""
    return RunConfig(
        host=host,
        request=RequestConfig(model="m"),
        workload=WorkloadConfig(),
        phases=PhaseConfig(),
        timeouts=Timeouts(),
        transport=TransportConfig(host),
        results_dir=str(results_dir),
        run_id="run",
    )


def measuring(results_dir: Path, concurrency: int) -> ProcessRun:
    """A session whose stage 0 is past its warm-up, as a worker's is after the conductor's
    announcements."""
    session = ProcessRun(config(results_dir))
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), concurrency))
    return session
