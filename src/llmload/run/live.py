"""A running run as the web UI shows it: the summary's own stage objects, up to now.

Nothing here is a second computation. The stages are ``summarize_stage`` over the same views
the summary is built from (a single process's own stages, or the master's merge of every
worker's deltas), with a window still open counted until now; users, in-flight requests,
workers and client health are what the Prometheus exporter reads (``ExportSource``); the
per-second rows are ``timeseries.csv``'s. So the tab, the exporter and summary.json agree up
to the requests that finish after the moment the tab was drawn.

Finished stages are summarised once and kept: the web UI polls every two seconds from the
same event loop that times the requests, and summarising a stage costs 1-2 ms (docs/webui.md),
which only the stage still running needs again; reads that arrived go first.
"""

from __future__ import annotations

from typing import Protocol

import gevent

from llmload.config.settings import RunConfig
from llmload.core.health import HealthLimits
from llmload.core.stages import StageController
from llmload.export.prometheus import ExportSource
from llmload.export.webtab import TIMELINE_S, Live
from llmload.metrics.timeseries import TimeSeries
from llmload.results.build import StageView, summarize_stage
from llmload.results.summary_stage import Stage


class RunState(Protocol):
    """What a ``ProcessRun`` (one process) and a ``Fleet`` (the master's merge) both keep."""

    announcements: list[tuple[float, int, str]]

    @property
    def timeseries(self) -> TimeSeries: ...

    def views(self, *, live: bool = False) -> list[StageView]: ...


class LiveView:
    """Builds ``Live`` for one run from its state, its exporter source and its conductor."""

    def __init__(
        self,
        config: RunConfig,
        run_id: str,
        source: ExportSource,
        state: RunState,
        controller: StageController,
    ) -> None:
        self._config = config
        self._run_id = run_id
        self._source = source
        self._state = state
        self._controller = controller
        self._limits = HealthLimits()
        self._done: dict[int, Stage] = {}  # stages that can no longer change

    def now(self) -> Live:
        views = self._state.views(live=True)
        current = max((v.index for v in views), default=-1)
        stages = []
        for view in views:
            stage = self._done.get(view.index)
            if stage is None:
                gevent.idle()  # reads that arrived go first: this greenlet shares their loop
                config = self._config
                stage = summarize_stage(
                    view,
                    self._limits,
                    config.checks,
                    workload=config.workload,
                    ignore_eos=config.request.ignore_eos,
                    usd_per_hour=config.cost.per_hour_usd,
                )
                if view.index < current - 1:  # two stages on: its drain and late folds are over
                    self._done[view.index] = stage
            stages.append(stage)
        return Live(
            run_id=self._run_id,
            phase=self._controller.phase.value,
            gauges=self._source.gauges(),
            health=self._source.health(),
            stages=tuple(stages),
            timeline=tuple(self._state.timeseries.rows(self._state.announcements, last=TIMELINE_S)),
        )
