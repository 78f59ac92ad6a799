"""What the target says about itself, and what its own metrics say while we load it.

At the start of a run: the fingerprint (models, version, launch arguments) and loud warnings
about settings that distort benchmarks. During the run (master or single process only): the
target's ``/metrics`` every few seconds, so each stage reports the server's own counts beside
the client's (generated tokens, queue, KV cache, speculative-decoding acceptance). What the run
asks of the server besides answers (a cache reset before it, the profiler over chosen stages:
``--reset-prefix-cache``, ``--server-profile``) happens here too, once, and each call's line
lands in the summary's ``server.control``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

import gevent

from llmload.config.settings import RunConfig
from llmload.core.phases import Phase
from llmload.core.redact import redact_url
from llmload.core.stages import Announcement
from llmload.protocol.jsonvalue import JSON
from llmload.results.build import cache_warning
from llmload.results.summary import Summary
from llmload.results.summary_stage import Stage
from llmload.target import control, gpu
from llmload.target.apis import line as api_line
from llmload.target.fingerprint import auth_headers, fingerprint, warnings
from llmload.target.scrape import Scraper, Snapshot, summarize

# How long ``stop`` waits for a poll in flight to unwind. The kill interrupts a poll waiting on
# its socket at once; this only keeps a stuck one from holding up the run's end.
_UNWIND_S = 2.0


class _Windows:
    """One scraper's snapshots cut into stages: the scrape at a stage's measured start, the
    periodic ones, and the scrape at its drain."""

    def __init__(self, scraper: Scraper) -> None:
        self.scraper = scraper
        self._marks: dict[int, int] = {}  # stage -> index of its first snapshot
        self.stages: dict[int, tuple[Snapshot, ...]] = {}

    def on_phase(self, a: Announcement) -> None:
        if not self.scraper.available:
            return
        if a.phase is Phase.MEASURE:
            self.scraper.poll()
            self._marks[a.stage] = len(self.scraper.snapshots) - 1
        elif a.phase is Phase.DRAIN and a.stage in self._marks:
            self.scraper.poll()
            samples = tuple(self.scraper.snapshots[self._marks[a.stage] :])
            if len(samples) >= 2:
                self.stages[a.stage] = samples


class ServerWatch:
    def __init__(self, config: RunConfig, planned_concurrency: int | None, interval_s: float = 5.0) -> None:
        self._config = config
        self._planned = planned_concurrency
        self._interval_s = interval_s
        self.info: dict[str, JSON] = {}  # the fingerprint, its warnings, whether /metrics answered
        self._warnings: list[str] = []
        self._server: _Windows | None = None
        self._gpu: _Windows | None = None
        self._greenlet: gevent.Greenlet[[], None] | None = None
        self._stopped = False
        self._control: list[JSON] = []  # what was asked of the server, and what it said
        self._profiling: int | None = None  # the stage whose profile is running

    def start(self) -> None:
        host, key = self._config.host, self._config.request.api_key
        # Until the first look answers, the server has not answered: a run whose time runs out
        # while a hung server keeps the look waiting says so.
        self.info = {"url": redact_url(host), "reachable": False}
        self.info = fingerprint(host, api_key=key)
        self.info["control"] = self._control
        if self._config.server_control.reset_prefix_cache:
            self._ask(
                None, "reset_prefix_cache", lambda: control.reset_cache(host, self._engine, auth_headers(key))
            )
        self._warnings = warnings(self.info, self._planned)
        self.info["warnings"] = self._warnings  # the same list: a GPU warning below joins it
        server = Scraper(host, api_key=key)
        self._server = _Windows(server)
        if self._config.gpu_metrics:
            self._gpu = _Windows(Scraper(host, url=self._config.gpu_metrics, reducer=gpu.reduce))
            if self._gpu.scraper.poll() is None or not self._gpu.scraper.snapshots[-1].values.get("gpus"):
                why = self._gpu.scraper.last_error or "no DCGM_FI_DEV_* metric in its answer"
                self._warnings.append(
                    f"--gpu-metrics {redact_url(self._config.gpu_metrics)}: {why}; "
                    "no GPU numbers unless it answers later (is dcgm-exporter running there?)"
                )
        for warning in self._warnings:
            print(f"llmload: WARNING: {warning}", file=sys.stderr, flush=True)
        apis = self.info.get("apis")
        if isinstance(apis, dict) and (said := api_line(apis)) is not None:
            print(f"llmload: {said}", file=sys.stderr, flush=True)
        if server.poll() is not None or self._gpu is not None:
            self._greenlet = gevent.spawn(self._loop)
        self.info["metrics_endpoint"] = bool(server.available)

    def _watched(self) -> list[_Windows]:
        return [w for w in (self._server, self._gpu) if w is not None]

    def _loop(self) -> None:
        while True:
            gevent.sleep(self._interval_s)
            # A sleep that ended just before ``stop`` wakes this greenlet ahead of the kill
            # queued behind it: without this test it would poll a closed client.
            if self._stopped:
                return
            for watched in self._watched():
                watched.scraper.poll()

    def on_phase(self, a: Announcement) -> None:
        for watched in self._watched():
            watched.on_phase(a)
        if a.stage not in self._config.server_control.profile_stages:
            return
        if a.phase is Phase.MEASURE:
            self._profile(a.stage, "start")
        elif a.phase is Phase.DRAIN and self._profiling == a.stage:
            self._profile(a.stage, "stop")

    @property
    def _engine(self) -> str | None:
        engine = self.info.get("engine")
        return str(engine) if engine else None

    def _profile(self, stage: int, action: Literal["start", "stop"]) -> None:
        host, key = self._config.host, self._config.request.api_key
        said = self._ask(
            stage, f"{action}_profile", lambda: control.profile(host, self._engine, auth_headers(key), action)
        )
        self._profiling = stage if action == "start" and not said.startswith("no ") else None

    def _ask(self, stage: int | None, action: str, call: Callable[[], str]) -> str:
        said = call()
        self._control.append({"stage": stage, "action": action, "at": round(time.time(), 3), "said": said})
        where = "" if stage is None else f" (stage {stage})"
        print(f"llmload: server{where}: {said}", file=sys.stderr, flush=True)
        return said

    def stage(self, index: int) -> dict[str, JSON] | None:
        samples = None if self._server is None else self._server.stages.get(index)
        return None if samples is None else summarize(samples[0], samples[-1], samples)

    def stop(self) -> None:
        if self._profiling is not None:  # the run ended inside a profiled stage
            self._profile(self._profiling, "stop")
        self._stopped = True
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            if gevent.getcurrent() is not gevent.get_hub():  # the hub itself may not wait
                self._greenlet.join(timeout=_UNWIND_S)  # a poll in flight ends before its client
            self._greenlet = None
        for watched in self._watched():
            watched.scraper.close()  # the stages' snapshots stay, for attach()

    def attach(self, summary: Summary) -> Summary:
        """The summary with what the server said: about itself, and per stage its /metrics."""
        stages = tuple(self._attach_stage(stage) for stage in summary.stages)
        warnings = (*self._warnings, *summary.warnings)
        return replace(summary, server=self.info, stages=stages, warnings=warnings)

    def _attach_stage(self, stage: Stage) -> Stage:
        if self._gpu is not None and (samples := self._gpu.stages.get(stage.index)):
            stage = replace(
                stage, gpu=gpu.summarize(samples[0], samples[-1], samples, stage.window_output_tokens)
            )
        server = self.stage(stage.index)
        if server is None:
            return stage
        rate = server.get("prefix_cache_hit_rate")
        hit_rate = float(rate) if isinstance(rate, int | float) else None
        warning = cache_warning(hit_rate, self._config.workload, "server /metrics")
        return replace(stage, server=server, warnings=(*stage.warnings, *([warning] if warning else [])))
