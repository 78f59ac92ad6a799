"""What the target says about itself, and what its own metrics say while we load it.

At the start of a run: the fingerprint (models, version, launch arguments) and loud warnings
about settings that distort benchmarks. During the run (master or single process only): the
target's ``/metrics`` every few seconds, so each stage reports the server's own counts beside
the client's (generated tokens, queue, KV cache, speculative-decoding acceptance).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import gevent

from llmload.config import RunConfig
from llmload.phases import Phase
from llmload.redact import redact_url
from llmload.run.summarize import cache_warning
from llmload.stages import Announcement
from llmload.summary import Stage, Summary
from llmload.target.fingerprint import fingerprint, warnings
from llmload.target.scrape import Scraper, Snapshot, summarize


class ServerWatch:
    def __init__(self, config: RunConfig, planned_concurrency: int | None, interval_s: float = 5.0) -> None:
        self._config = config
        self._planned = planned_concurrency
        self._interval_s = interval_s
        self.info: dict[str, Any] = {}
        self._scraper: Scraper | None = None
        self._greenlet: gevent.Greenlet[Any, None] | None = None
        self._marks: dict[int, int] = {}  # stage -> index of its first snapshot
        self._stages: dict[int, dict[str, Any]] = {}

    def start(self) -> None:
        host, key = self._config.host, self._config.request.api_key
        # Until the first look answers, the server has not answered: a run whose time runs out
        # while a hung server keeps the look waiting says so.
        self.info = {"url": redact_url(host), "reachable": False}
        self.info = fingerprint(host, api_key=key)
        self.info["warnings"] = warnings(self.info, self._planned)
        for warning in self.info["warnings"]:
            print(f"llmload: WARNING: {warning}", file=sys.stderr, flush=True)
        self._scraper = Scraper(host, api_key=key)
        if self._scraper.poll() is not None:
            self._greenlet = gevent.spawn(self._loop)
        self.info["metrics_endpoint"] = bool(self._scraper.available)

    def _loop(self) -> None:
        while True:
            gevent.sleep(self._interval_s)
            if self._scraper is not None:
                self._scraper.poll()

    def on_phase(self, a: Announcement) -> None:
        scraper = self._scraper
        if scraper is None or not scraper.available:
            return
        if a.phase is Phase.MEASURE:
            scraper.poll()
            self._marks[a.stage] = len(scraper.snapshots) - 1
        elif a.phase is Phase.DRAIN and a.stage in self._marks:
            scraper.poll()
            samples: list[Snapshot] = scraper.snapshots[self._marks[a.stage] :]
            if len(samples) >= 2:
                self._stages[a.stage] = summarize(samples[0], samples[-1], samples)

    def stage(self, index: int) -> dict[str, Any] | None:
        return self._stages.get(index)

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None
        if self._scraper is not None:
            self._scraper.close()
            self._scraper = None

    def attach(self, summary: Summary) -> Summary:
        """The summary with what the server said: about itself, and per stage its /metrics."""
        stages = tuple(self._attach_stage(stage) for stage in summary.stages)
        warnings = (*self.info.get("warnings", []), *summary.warnings)
        return replace(summary, server=self.info, stages=stages, warnings=warnings)

    def _attach_stage(self, stage: Stage) -> Stage:
        server = self.stage(stage.index)
        if server is None:
            return stage
        warning = cache_warning(server.get("prefix_cache_hit_rate"), self._config.workload, "server /metrics")
        return replace(stage, server=server, warnings=(*stage.warnings, *([warning] if warning else [])))
