"""What each kind of Locust process does at each point of a run.

- ``LocalRole``: one process conducts the stages, runs the users and writes the results.
- ``WorkerRole``: runs users, applies the master's phase announcements, ships stats deltas and a
  final delta once its users stopped; writes its own ``requests-<worker>.jsonl``.
- ``MasterRole``: conducts the stages for the fleet, merges deltas, runs the final-flush protocol
  (stop the workers' users, wait for every worker's final, name the ones that never answered)
  and writes the summary.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict
from typing import Any

import gevent
from locust.rpc import Message
from locust.runners import STATE_MISSING, STATE_STOPPING

from llmload.config import RunConfig
from llmload.exitcodes import decide
from llmload.export import console
from llmload.export.prometheus import ExporterHandle, ExportSource, start_exporter
from llmload.export.pushgateway import finish as finish_exporter
from llmload.export.report import write_report
from llmload.export.results import ResultsDir, new_run_id
from llmload.locust.conductor import Conductor
from llmload.locust.export_source import FleetSource, SessionSource
from llmload.locust.fleet import Fleet
from llmload.locust.server_watch import ServerWatch
from llmload.locust.session import Session
from llmload.locust.shipping import DELTA, PHASE, Shipper
from llmload.locust.summarize import build_summary
from llmload.stages import Announcement, StagePhase, sweep_plans


def make_conductor(environment: Any, config: RunConfig, announce: Any, progress: Any) -> Conductor:
    phases, open_loop = config.phases, config.open_loop
    if environment.shape_class is None:
        users = environment.parsed_options.num_users or 1
        if open_loop.rate is not None:
            users = open_loop.max_in_flight
        plans = Conductor.plain_run(users, phases.warmup_requests, phases.warmup_s,
                                    open_loop.rate)
        return Conductor(plans, announce, progress)
    sweep = config.sweep
    plans = sweep_plans(list(sweep.levels), window_s=sweep.window_s,
                        warmup_requests=phases.warmup_requests, warmup_s=phases.warmup_s,
                        drain_s=phases.drain_s, repeat=sweep.repeat, rates=list(sweep.rates),
                        max_in_flight=open_loop.max_in_flight)
    return Conductor(plans, announce, progress)


def _planned(environment: Any, config: RunConfig) -> int:
    if environment.shape_class is not None:
        return max(config.sweep.levels)
    return int(environment.parsed_options.num_users or 1)


def _announcement(data: dict[str, Any]) -> Announcement:
    return Announcement(data["stage"], StagePhase(data["phase"]), data["wall_time"],
                        data["concurrency"], data.get("rate"))


def _write(results: ResultsDir, summary: dict[str, Any], stats: list[dict[str, Any]],
           series: list[dict[str, Any]]) -> None:
    results.write_json("histograms.json", {"stages": stats})
    results.write_csv("timeseries.csv", series)
    results.write_json("summary.json", summary)


def start_exporter_if(config: RunConfig, source: ExportSource) -> ExporterHandle | None:
    if not config.exporter.port:
        return None
    handle = start_exporter(config.exporter, source)
    print(f"llmload: Prometheus metrics on http://{config.exporter.host}:{handle.port}/metrics",
          file=sys.stderr, flush=True)
    return handle


def conclude(environment: Any, config: RunConfig, results: ResultsDir,
             summary: dict[str, Any]) -> str:
    """Decide the exit status, record it in the summary, write the report; return the table
    (printed at Locust's ``quit`` event, after Locust's own tables, so ours is what stays on
    screen)."""
    checks = config.checks
    code, reasons = decide(summary, checks.slo, checks.max_error_rate, checks.fail_on_client_bound)
    summary["exit"] = {"code": int(code), "name": code.name.lower(), "reasons": reasons}
    results.write_json("summary.json", summary)
    write_report(results.path)
    environment.process_exit_code = int(code)
    return console.render(summary, str(results.path))


class LocalRole:
    def __init__(self, environment: Any, config: RunConfig) -> None:
        self.session = Session(config)
        self.conductor = make_conductor(environment, config, self._announce,
                                        self.session.progress)
        self._environment = environment
        self.server = ServerWatch(config, _planned(environment, config))
        self.final_text: str | None = None
        self.exporter: ExporterHandle | None = None

    def _announce(self, a: Announcement) -> None:
        finished = self.session.stage
        self.session.apply(a)
        self.server.on_phase(a)
        if finished >= 0 and (a.phase is StagePhase.DONE or a.stage != finished):
            self.write(complete=False)  # a finished stage survives an interrupted run

    def test_start(self) -> None:
        self.server.start()
        self.session.start()
        self.exporter = start_exporter_if(self.session.config,
                                          SessionSource(self.session, self._environment))
        if self._environment.shape_class is None:
            self.conductor.start_ticking()
        self.conductor.start_progress(self.session.tokens_received)

    def test_stopping(self) -> None:
        self.conductor.stop()

    def test_stop(self) -> None:
        self.session.finish_stages()
        self.server.stop()
        summary = self.write(complete=True)
        self.session.close()
        self.final_text = conclude(self._environment, self.session.config, self.session.results,
                                   summary)

    def after_quit(self) -> None:
        if self.exporter is not None:  # the final push, and the linger for the last scrape
            finish_exporter(self.session.config.exporter, self.exporter, self.session.run_id)

    def write(self, *, complete: bool) -> dict[str, Any]:
        s = self.session
        summary = build_summary(s.config, run_id=s.run_id, started_at=s.started_at, model=s.model,
                                views=s.views(), records=[s.describe()], complete=complete)
        self.server.attach(summary)
        _write(s.results, summary, [v.stats.to_dict() for v in s.views()],
               s.timeseries.rows(s.announcements))
        return summary


class WorkerRole:
    def __init__(self, environment: Any) -> None:
        self._environment = environment
        self.session: Session | None = None
        self._shipper: Shipper | None = None
        self._pending: list[tuple[Announcement, float]] = []
        self.final_text: str | None = None
        environment.runner.register_message(PHASE, self._on_phase)

    def _on_phase(self, environment: Any, msg: Any) -> None:
        a, received = _announcement(msg.data), time.time()
        if self.session is None:
            self._pending.append((a, received))
        else:
            self.session.apply(a, received)

    def start(self, config: RunConfig) -> None:
        """Called at test_start, once the master's options have reached this worker."""
        runner = self._environment.runner
        index = max(runner.worker_index, 0)
        self.session = session = Session(config, process_tag=f"worker-{index}",
                                         user_offset=index * 1_000_000)
        session.start()
        for a, received in self._pending:
            session.apply(a, received)
        self._pending.clear()
        self._shipper = Shipper(session, runner.send_message, lambda: runner.user_count,
                                config.fleet.report_interval_s)
        self._shipper.start()

    def after_quit(self) -> None:
        pass  # workers serve no metrics: the master exports the merged fleet

    def test_stop(self) -> None:
        if self.session is None or self._shipper is None:
            return
        self._shipper.stop()
        self.session.finish_stages()
        self._shipper.ship(final=True)
        self.session.close()
        self.session = None
        # Locust's worker sleeps stop_timeout after a stop before it reads the master's next
        # message; our users have stopped already, so let it hear the master's quit now.
        self._environment.stop_timeout = 0


class MasterRole:
    def __init__(self, environment: Any, config: RunConfig) -> None:
        self._environment = environment
        self.config = config
        self.run_id = config.run_id or new_run_id()
        # Workers receive the master's custom options with their first spawn message.
        environment.parsed_options.run_id = self.run_id
        self.results = ResultsDir(config.results_dir, self.run_id)
        self.fleet = Fleet()
        self.started_at = time.time()
        self.conductor = make_conductor(environment, config, self._announce, self.fleet.progress)
        self.server = ServerWatch(config, _planned(environment, config))
        self.final_text: str | None = None
        self.exporter: ExporterHandle | None = None
        runner = environment.runner
        runner.register_message(DELTA, self._on_delta)
        environment.events.worker_connect.add_listener(self._on_worker_connect)

    def _announce(self, a: Announcement) -> None:
        self.fleet.record(a)
        self.server.on_phase(a)
        self._environment.runner.send_message(PHASE, asdict(a))

    def _on_delta(self, environment: Any, msg: Any) -> None:
        self.fleet.on_delta(msg.node_id, msg.data)

    def _on_worker_connect(self, client_id: str, **_kw: Any) -> None:
        self.fleet.join(client_id)
        expected = self._environment.parsed_options.expect_workers
        names = ", ".join(self.fleet.workers)
        print(f"llmload: {len(self.fleet.workers)} of {expected} expected workers connected: "
              f"{names}", file=sys.stderr, flush=True)
        for a in self.fleet.history:  # a late joiner learns the phase it joins in
            self._environment.runner.send_message(PHASE, asdict(a), client_id=client_id)

    def test_start(self) -> None:
        self.server.start()
        self.exporter = start_exporter_if(
            self.config, FleetSource(self.fleet, self._environment, self.run_id, self.config.host,
                                     self.config.scenario))
        if self._environment.shape_class is None:
            self.conductor.start_ticking()
        self.conductor.start_progress(self.fleet.tokens_received)

    def test_stopping(self) -> None:
        self.conductor.stop()
        self._final_flush()
        self.server.stop()

    def _final_flush(self) -> None:
        """Stop every worker's users and wait for each worker's final delta, by worker id."""
        runner = self._environment.runner
        # Locust sets STOPPING only after test_stopping; while it says RUNNING, a worker that
        # reports stopped or ready again gets users re-dispatched to it (and the shape keeps
        # ticking), so requests would run after that worker's final delta.
        runner.update_state(STATE_STOPPING)
        for client in list(runner.clients.values()):
            runner.server.send_to_client(Message("stop", None, client.id))  # type: ignore[no-untyped-call]
        deadline = time.time() + self._environment.stop_timeout + self.config.fleet.final_wait_s
        while self.fleet.waiting_for() and time.time() < deadline:
            gone = [cid for cid in self.fleet.workers
                    if cid not in runner.clients or runner.clients[cid].state == STATE_MISSING]
            self.fleet.mark_lost(gone)
            gevent.sleep(0.1)
        late = self.fleet.waiting_for()
        if late:
            print(f"llmload: no final report from {', '.join(late)}", file=sys.stderr, flush=True)
            self.fleet.mark_lost(cid for cid, w in self.fleet.workers.items() if w.name in late)
        if self._environment.parsed_options.headless:
            # Stopped workers left runner.clients, so Locust's own quit would never reach them.
            for cid, w in self.fleet.workers.items():
                if not w.lost:
                    runner.server.send_to_client(Message("quit", None, cid))  # type: ignore[no-untyped-call]

    def test_stop(self) -> None:
        self.final_text = conclude(self._environment, self.config, self.results,
                                   self.write(complete=True))

    def after_quit(self) -> None:
        if self.exporter is not None:  # the final push, and the linger for the last scrape
            finish_exporter(self.config.exporter, self.exporter, self.run_id)

    def write(self, *, complete: bool) -> dict[str, Any]:
        lost = self.fleet.lost_report(time.time(), self.config.workload.max_tokens)
        warnings = [f"worker {x['worker']} was lost: up to {x['requests_missing_at_most']} "
                    "requests may be missing" for x in lost]
        views = self.fleet.views()
        summary = build_summary(
            self.config, run_id=self.run_id, started_at=self.started_at, model=self.fleet.model,
            views=views, records=self.fleet.record_files(), complete=complete and not lost,
            workers=len(self.fleet.workers), extra_run={"lost_workers": lost}, warnings=warnings)
        self.server.attach(summary)
        _write(self.results, summary, [v.stats.to_dict() for v in views],
               self.fleet.timeseries.rows(self.fleet.announcements))
        return summary
