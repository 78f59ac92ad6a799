"""The master of a distributed run: conducts the stages for the fleet, merges the workers'
deltas, runs the final-flush protocol (stop the workers' users, wait for every worker's final
by id, name the ones that never answered) and writes the summary."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import gevent
from locust.env import Environment
from locust.rpc import Message
from locust.runners import STATE_MISSING, STATE_STOPPING, MasterRunner

from llmload.config.settings import RunConfig
from llmload.core.stages import Announcement
from llmload.core.stop import FailedFast, Interrupted, Refused
from llmload.errors import LlmloadError
from llmload.export.results import ResultsDir, new_run_id
from llmload.locust.clock import MasterClocks
from llmload.locust.control import headless, hurry, running_users, stop_run
from llmload.locust.env import listen, options_of
from llmload.locust.lifecycle import RunLifecycle
from llmload.locust.limits import REFUSED
from llmload.locust.plans import make_conductor, planned_concurrency
from llmload.protocol.jsonvalue import JSON, obj, string
from llmload.results.build import build_summary
from llmload.results.summary import Summary, WorkerClock
from llmload.run.conductor import Conductor
from llmload.run.delta import MESSAGE as DELTA
from llmload.run.export_source import FleetSource
from llmload.run.fleet import Fleet
from llmload.run.live import RunState
from llmload.run.server_watch import ServerWatch
from llmload.run.shipping import PHASE, READY
from llmload.target.tokenize import chosen as chosen_tokenize


@dataclass(slots=True)
class _Run:
    """One run of the fleet: a headless master has one, a web UI master one per swarm."""

    config: RunConfig
    run_id: str
    results: ResultsDir
    fleet: Fleet
    conductor: Conductor
    server: ServerWatch
    started_at: float = field(default_factory=time.time)
    # What --tokenize came to, asked of the target at the start as each worker asks it itself
    tokenize: str | None = None


class MasterRole(RunLifecycle):
    def __init__(
        self,
        environment: Environment,
        runner: MasterRunner,
        config: RunConfig,
        configure: Callable[[], RunConfig],
    ) -> None:
        super().__init__(environment, config, configure)
        self._runner = runner
        self._run: _Run | None = None
        self._clocks = MasterClocks(runner)
        self._ready: set[str] = set()  # workers whose llmload handlers are registered
        runner.register_message(DELTA, self._on_delta)
        runner.register_message(REFUSED, self._on_refused)
        runner.register_message(READY, self._on_worker_ready)
        listen(environment.events.worker_connect, self._on_worker_connect)
        if headless(environment):
            # Set up now, as the workers connect; a web UI swarm's run is set up when it starts
            # (test_start, before the spawn message takes the run id to the workers), once its
            # user count is known.
            self._arm()

    def _arm(self) -> _Run:
        # A web UI swarm reads the user's --run-id (or none) again, not the last run's set below.
        options_of(self._environment).run_id = self._config.run_id
        config = self._next_config()
        run_id = config.run_id or new_run_id()
        # Workers receive the master's custom options with every spawn message.
        options_of(self._environment).run_id = run_id
        fleet = Fleet()
        for client_id in self._runner.clients:  # connected before this run
            fleet.join(client_id)
        conductor = make_conductor(
            self._environment, config, self._announce, fleet.progress, self._levels_so_far
        )
        server = ServerWatch(config, planned_concurrency(self._environment, config))
        self._run = _Run(config, run_id, ResultsDir(config.results_dir, run_id), fleet, conductor, server)
        self.exit_code = None
        return self._run

    @property
    def run(self) -> _Run:
        return self._run or self._arm()

    @property
    def config(self) -> RunConfig:
        return self.run.config

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def results(self) -> ResultsDir:
        return self.run.results

    @property
    def fleet(self) -> Fleet:
        return self.run.fleet

    @property
    def conductor(self) -> Conductor:
        return self.run.conductor

    @property
    def server(self) -> ServerWatch:
        return self.run.server

    @property
    def started_at(self) -> float:
        return self.run.started_at

    @property
    def state(self) -> RunState:
        return self.fleet

    def _announce(self, a: Announcement) -> None:
        finished = self.fleet.current_stage
        self.fleet.record(a)
        self.server.on_phase(a)
        self._runner.send_message(PHASE, self._phase_message(a))
        if finished >= 0 and a.stage != finished:
            # a stage's own numbers are complete once its drain ended
            self.write_so_far()

    def _phase_message(self, a: Announcement) -> dict[str, JSON]:
        # The run id tells a worker which swarm an announcement belongs to: the last ones of a
        # web UI swarm can reach it after its users stopped, and must not touch the next run.
        return {**asdict(a), "run": self.run.run_id}

    def _on_delta(self, environment: Environment, msg: Message) -> None:
        stopped = self.fleet.stopped
        self.fleet.on_delta(msg.node_id, msg.data)
        if stopped is None and isinstance(self.fleet.stopped, FailedFast):
            stop_run(self._environment)

    def _on_refused(self, environment: Environment, msg: Message) -> None:
        """A worker cannot start its share (its limits, the target's 401 to it): the run ends
        before it measures anything, with the worker's one line and the refusal's exit code,
        as a plain run's refusal."""
        data = obj(msg.data, "refusal")
        worker, line = string(data["worker"], "worker"), string(data["line"], "line")
        if self._run is None or self.fleet.stopped is not None:
            return  # the run is stopping already; the first refusal is its verdict
        print(f"llmload: {worker}: {line}", file=sys.stderr, flush=True)
        self.fleet.stopped = Refused(process=worker, line=line)
        stop_run(self._environment)

    def refuse(self, error: LlmloadError) -> None:
        self.fleet.stopped = Refused(line=str(error))

    def interrupt(self) -> None:
        if self.exit_code is None and self.fleet.stopped is None:
            self.fleet.stopped = Interrupted(stage=max(self.fleet.current_stage, 0))
            hurry(self._environment)

    def _on_worker_connect(self, client_id: str, **_kw: object) -> None:
        run = self._run  # None between web UI swarms: the next run joins every connected worker
        if run is not None:
            run.fleet.join(client_id)
        workers = list(run.fleet.workers if run is not None else self._runner.clients)
        expected = options_of(self._environment).expect_workers
        print(
            f"llmload: {len(workers)} of {expected} expected workers connected: {', '.join(workers)}",
            file=sys.stderr,
            flush=True,
        )
        if client_id in self._ready:  # connected again (after a swarm's stop): it can hear us now
            self._greet(client_id)

    def _on_worker_ready(self, environment: Environment, msg: Message) -> None:
        self._ready.add(msg.node_id)
        self._greet(msg.node_id)

    def _greet(self, client_id: str) -> None:
        """Probe the worker's clock; a late joiner learns the phase."""
        self._clocks.follow(client_id)
        for a in self._run.fleet.history if self._run is not None else ():
            self._runner.send_message(PHASE, self._phase_message(a), client_id=client_id)

    def test_start(self) -> None:
        self.server.start()
        self.run.tokenize = chosen_tokenize(self.config, self.config.request.model or self.fleet.model)
        users = running_users(self._environment)
        config = self.config
        clocks = self._clocks.offsets
        source = FleetSource(self.fleet, users, self.run_id, config.host, config.scenario, clocks=clocks)
        self._go_live(source, self.fleet.tokens_received)

    def test_stopping(self) -> None:
        if self.conductor.cut_short():
            self.interrupt()
        self.conductor.stop()
        if not isinstance(self.fleet.stopped, Refused):  # refused: no worker ran, none reports
            self._final_flush()
        self.server.stop()

    def _final_flush(self) -> None:
        """Stop every worker's users and wait for each worker's final delta, by worker id."""
        runner = self._runner
        # Locust sets STOPPING only after test_stopping; while it says RUNNING, a worker that
        # reports stopped or ready again gets users re-dispatched to it (and the shape keeps
        # ticking), so requests would run after that worker's final delta.
        runner.update_state(STATE_STOPPING)
        for client in list(runner.clients.values()):
            runner.server.send_to_client(Message("stop", None, client.id))  # type: ignore[no-untyped-call]
        deadline = time.time() + self._environment.stop_timeout + self.config.fleet.final_wait_s
        while self.fleet.waiting_for() and time.time() < deadline:
            gone = [
                cid
                for cid in self.fleet.workers
                if cid not in runner.clients or runner.clients[cid].state == STATE_MISSING
            ]
            self.fleet.mark_lost(gone)
            gevent.sleep(0.1)
        late = self.fleet.waiting_for()
        if late:
            print(f"llmload: no final report from {', '.join(late)}", file=sys.stderr, flush=True)
            self.fleet.mark_lost(cid for cid, w in self.fleet.workers.items() if w.name in late)
        if options_of(self._environment).headless:
            # Stopped workers left runner.clients, so Locust's own quit would never reach them.
            for cid, w in self.fleet.workers.items():
                if not w.lost:
                    runner.server.send_to_client(Message("quit", None, cid))  # type: ignore[no-untyped-call]

    def test_stop(self) -> None:
        self._conclude(self.final_summary())

    def _on_verdict(self, exit_code: int) -> None:
        self.fleet.exit_code = exit_code

    def _disarm(self) -> None:
        self._run = None

    def _clock_report(self) -> list[WorkerClock]:
        offsets = self._clocks.offsets
        return [
            WorkerClock(worker=w.name, offset_s=o.offset_s, uncertainty_s=o.uncertainty_s, probes=o.probes)
            for cid, w in sorted(self.fleet.workers.items(), key=lambda item: item[1].name)
            if (o := offsets.get(cid)) is not None
        ]

    def _summary(self, *, complete: bool) -> Summary:
        lost = self.fleet.lost_report(time.time(), self.config.workload.max_tokens)
        warnings = [
            *self.fleet.warnings,
            *(
                f"worker {x.worker} was lost: up to {x.requests_missing_at_most} requests may be missing"
                for x in lost
            ),
        ]
        views = self.fleet.views()
        summary = build_summary(
            self.config,
            run_id=self.run_id,
            started_at=self.started_at,
            model=self.fleet.model,
            views=views,
            records=self.fleet.record_files(),
            complete=complete and not lost,
            workers=len(self.fleet.workers),
            lost_workers=lost,
            clocks=self._clock_report(),
            warnings=warnings,
            stopped=self.fleet.stopped,
            saturation=self.conductor.saturation,
            tokenize=self.run.tokenize,
        )
        return self.server.attach(summary)
