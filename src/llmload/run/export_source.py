"""What the live Prometheus exporter reads at scrape time, in a single process or on the master.

Both sources answer ``ExportSource`` (export/prometheus.py) from state the run keeps anyway:
the single process's own cumulative ``ClassicStats``, or the master's merge of the workers'
deltas. Nothing is computed for the exporter on the request path beyond those bucket counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import llmload
from llmload.core.clock import ClockOffset
from llmload.metrics.classic import ClassicStats
from llmload.run.fleet import Fleet
from llmload.run.process_run import ProcessRun


def _labels(run_id: str, target: str, model: str | None, scenario: str) -> dict[str, str]:
    return {
        "run_id": run_id,
        "target": target,
        "model": model or "",
        "scenario": scenario,
        "version": llmload.__version__,
    }


class SessionSource:
    def __init__(self, session: ProcessRun, users: Callable[[], int]) -> None:
        self._session = session
        self._users = users  # running users, as the load framework counts them

    def classic(self) -> Mapping[int, ClassicStats]:
        self._session.fold_pending()
        return self._session.fold.classic

    def gauges(self) -> Mapping[str, float]:
        s = self._session
        state = s.stages.get(s.stage)
        gauges = {
            "users": float(self._users()),
            "in_flight": float(s.in_flight),
            "workers": 0.0,
            "stage": float(max(s.stage, 0)),
            "concurrency": float(state.concurrency if state else 0),
        }
        if s.exit_code is not None:
            gauges["exit_code"] = float(s.exit_code)
        return gauges

    def health(self) -> Mapping[str, Mapping[str, float | None]]:
        return {self._session.process_tag: self._session.health_now()}

    def labels(self) -> Mapping[str, str]:
        s = self._session
        return _labels(s.run_id, s.config.host, s.model, s.config.scenario)


class FleetSource:
    """``clocks``: each worker's clock offset by client id, as the master last estimated it."""

    def __init__(
        self,
        fleet: Fleet,
        users: Callable[[], int],
        run_id: str,
        target: str,
        scenario: str,
        *,
        clocks: Mapping[str, ClockOffset] | None = None,
    ) -> None:
        self._fleet = fleet
        self._users = users
        self._labels = (run_id, target, scenario)
        self._clocks = clocks if clocks is not None else {}

    def classic(self) -> Mapping[int, ClassicStats]:
        return self._fleet.classic

    def gauges(self) -> Mapping[str, float]:
        f = self._fleet
        live = [w for w in f.workers.values() if not w.lost and not w.final]
        meta = f.stages.get(f.current_stage)
        gauges = {
            "users": float(self._users()),
            "in_flight": float(sum(w.in_flight for w in live)),
            "workers": float(len(live)),
            "stage": float(max(f.current_stage, 0)),
            "concurrency": float(meta.concurrency if meta else 0),
        }
        if f.exit_code is not None:
            gauges["exit_code"] = float(f.exit_code)
        return gauges

    def health(self) -> Mapping[str, Mapping[str, float | None]]:
        """Each worker's health, the streams it runs and its clock against the master's."""
        per_worker: dict[str, Mapping[str, float | None]] = {}
        for client_id, w in self._fleet.workers.items():
            if w.health_now:
                clock = self._clocks.get(client_id)
                offset = {} if clock is None else {"clock_offset_s": clock.offset_s}
                per_worker[w.name] = {**w.health_now, "users": float(w.users), **offset}
        return per_worker

    def labels(self) -> Mapping[str, str]:
        run_id, target, scenario = self._labels
        return _labels(run_id, target, self._fleet.model, scenario)
