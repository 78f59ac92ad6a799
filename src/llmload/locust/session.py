"""Everything one Locust process shares between its users for one run.

A plain run is one stage: warm-up until enough requests completed (and a minimum time passed),
then the measured window until Locust stops the test, then the drain, during which users finish
the request in hand (Locust's stop timeout) and start no other. Records are written as they
finish and folded into the stage's mergeable stats; at the end the summary is written.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Any

from llmload.client import ChatClient
from llmload.config import Endpoint, RunConfig
from llmload.export.results import ResultsDir, new_run_id
from llmload.health import HealthMonitor
from llmload.metrics.aggregate import StageStats, Window
from llmload.record import RequestRecord
from llmload.target.models import first_model
from llmload.transport.factory import TransportFactory
from llmload.workload.datasets import load_dataset
from llmload.workload.prompts import PromptSource, SyntheticPrompts


def make_prompts(config: RunConfig) -> PromptSource:
    w = config.workload
    if w.dataset is not None:
        return load_dataset(w.dataset, max_tokens=w.max_tokens, seed=w.seed)
    return SyntheticPrompts(w.prompt_tokens, w.max_tokens, w.output_jitter, w.seed, w.prefix_cache)


class Session:
    """The run state of one process: config, transports, prompts, window, stats, records."""

    def __init__(self, config: RunConfig, process_tag: str = "local") -> None:
        self.config = config
        self.process_tag = process_tag
        self.run_id = config.run_id or new_run_id()
        self.results = ResultsDir(config.results_dir, self.run_id)
        self.records = self.results.open_records()
        self.transports = TransportFactory(config.transport)
        self.prompts = make_prompts(config)
        self.window = Window()
        self.stats = StageStats()
        self.health = HealthMonitor()
        self.model = config.request.model
        self.started_at = time.time()
        self._clients: dict[Endpoint, ChatClient] = {}
        self._user_ids = itertools.count()
        self._warmup_done = 0
        self._window_opened_wall: float | None = None
        self._window_seconds: float | None = None
        self.concurrency: int | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        if self.model is None:
            verify: bool | str = self.config.transport.ca_file or self.config.transport.verify
            self.model = first_model(self.config.host, api_key=self.config.request.api_key,
                                     verify=verify)
        self.health.start()
        self._spawned_ns = time.perf_counter_ns()
        if self._warmup_target() == 0 and self.config.phases.warmup_s == 0:
            self.open_window()

    def open_window(self) -> None:
        if self.window.t0_ns is None:
            self.window.t0_ns = time.perf_counter_ns()
            self._window_opened_wall = time.time()
            self.health.reset()

    def close_window(self, concurrency: int) -> None:
        if self.window.t0_ns is not None and self.window.t1_ns is None:
            self.window.t1_ns = time.perf_counter_ns()
            self._window_seconds = (self.window.t1_ns - self.window.t0_ns) / 1e9
            self.health_snapshot = self.health.snapshot()
        self.concurrency = concurrency

    def close(self) -> None:
        self.health.stop()
        self.transports.close()
        self.records.close()

    # -- used by users --------------------------------------------------------------------------

    def new_user_id(self) -> int:
        return next(self._user_ids)

    def client(self, endpoint: Endpoint) -> ChatClient:
        if endpoint not in self._clients:
            assert self.model is not None, "Session.start() resolves the model first"
            request = dataclasses.replace(self.config.request, endpoint=endpoint)
            self._clients[endpoint] = ChatClient(request, self.model, self.config.timeouts)
        return self._clients[endpoint]

    def on_record(self, record: RequestRecord) -> None:
        self.records.write(record)
        self.stats.add(record, self.window)
        if self.window.t0_ns is None:
            self._warmup_done += 1
            self._maybe_open_window()

    def _warmup_target(self) -> int:
        configured = self.config.phases.warmup_requests
        return configured if configured is not None else (self.concurrency or 0)

    def _maybe_open_window(self) -> None:
        elapsed_s = (time.perf_counter_ns() - self._spawned_ns) / 1e9
        if self._warmup_done >= self._warmup_target() and elapsed_s >= self.config.phases.warmup_s:
            self.open_window()

    # -- results --------------------------------------------------------------------------------

    @property
    def window_seconds(self) -> float:
        return self._window_seconds or 0.0

    @property
    def window_opened_wall(self) -> float | None:
        return self._window_opened_wall

    def describe(self) -> dict[str, Any]:
        return {"process": self.process_tag, "records": self.records.count,
                "records_file": self.records.path.name}
