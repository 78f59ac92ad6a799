"""What a process that runs users does at each point of a run.

- ``LocalRole``: one process conducts the stages, runs the users and writes the results (its
  lifecycle, shared with the master's: ``lifecycle.RunLifecycle``).
- ``WorkerRole``: runs users, applies the master's phase announcements, ships stats deltas and a
  final delta once its users stopped; writes its own ``requests-<worker>.jsonl``.

The master's side is ``master.MasterRole``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llmload.config.settings import RunConfig
from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.core.stop import Interrupted, Refused
from llmload.errors import LlmloadError
from llmload.export.results import ResultsDir
from llmload.locust.clock import WorkerClock
from llmload.locust.control import hurry, running_users, sigint_to_main, stop_run
from llmload.locust.lifecycle import RunLifecycle
from llmload.locust.limits import REFUSED, check_worker
from llmload.locust.plans import make_conductor, planned_concurrency
from llmload.protocol.jsonvalue import (
    JSONObject,
    integer,
    number,
    obj,
    optional_number,
    optional_string,
    string,
)
from llmload.results.build import build_summary
from llmload.results.summary import Summary
from llmload.run.conductor import Conductor
from llmload.run.export_source import SessionSource
from llmload.run.live import RunState
from llmload.run.process_run import ProcessRun
from llmload.run.server_watch import ServerWatch
from llmload.run.shipping import PHASE, READY, Shipper
from llmload.target.tokenize import chosen as chosen_tokenize

if TYPE_CHECKING:  # importing locust patches the process: the roles leave that to the plugin
    from locust.env import Environment
    from locust.rpc import Message
    from locust.runners import WorkerRunner


def _announcement(data: JSONObject) -> Announcement:
    return Announcement(
        integer(data["stage"], "stage"),
        Phase(string(data["phase"], "phase")),
        number(data["wall_time"], "wall_time"),
        integer(data["concurrency"], "concurrency"),
        optional_number(data.get("rate"), "rate"),
    )


class LocalRole(RunLifecycle):
    """Every start is a run of its own: a headless run has one; each swarm from the web UI is
    another, with its own results directory, the user count it was started with, and the
    options of the start form (``configure`` reads them again)."""

    def __init__(
        self, environment: Environment, config: RunConfig, configure: Callable[[], RunConfig]
    ) -> None:
        super().__init__(environment, config, configure)
        self._session: ProcessRun | None = None  # the run now; None between web UI swarms
        self._conductor: Conductor | None = None
        self._server: ServerWatch | None = None
        self._tokenize: str | None = None  # what the run's --tokenize came to, once started

    # A run is set up when first needed: a sweep's shape ticks before Locust's test_start, a
    # web UI swarm knows its user count only once started.
    @property
    def session(self) -> ProcessRun:
        if self._session is None:
            self._arm()
        assert self._session is not None
        return self._session

    @property
    def conductor(self) -> Conductor:
        if self._conductor is None:
            self._arm()
        assert self._conductor is not None
        return self._conductor

    @property
    def server(self) -> ServerWatch:
        if self._server is None:
            self._arm()
        assert self._server is not None
        return self._server

    @property
    def config(self) -> RunConfig:
        return self.session.config

    @property
    def run_id(self) -> str:
        return self.session.run_id

    @property
    def results(self) -> ResultsDir:
        return self.session.results

    @property
    def state(self) -> RunState:
        return self.session

    def _arm(self) -> None:
        environment = self._environment
        config = self._next_config()
        self._session = session = ProcessRun(config)
        self._conductor = make_conductor(
            environment, config, self._announce, session.progress, self._levels_so_far
        )
        self._server = ServerWatch(config, planned_concurrency(environment, config))
        self._tokenize = None
        session.on_stop = lambda _why: stop_run(environment)
        session.on_window_full = self._conductor.tick
        self.exit_code = None

    def _disarm(self) -> None:
        self._session = self._conductor = self._server = None

    def _announce(self, a: Announcement) -> None:
        finished = self.session.stage
        self.session.apply(a)
        self.server.on_phase(a)
        if finished >= 0 and (a.phase is Phase.DONE or a.stage != finished):
            self.write_so_far()

    def test_start(self) -> None:
        self.server.start()
        self.session.start()
        # for the summary: the session decided for its prompts, this asks the same of the target
        self._tokenize = chosen_tokenize(self.session.config, self.session.model)
        source = SessionSource(self.session, running_users(self._environment))
        self._go_live(source, self.session.tokens_received)

    def test_stopping(self) -> None:
        if self.conductor.cut_short():
            self.interrupt()
        self.conductor.stop()

    def interrupt(self) -> None:
        """SIGINT or SIGTERM: Locust's shutdown began before the run ended by itself."""
        if self.exit_code is None:
            self.session.stop(Interrupted(stage=max(self.session.stage, 0)))
            hurry(self._environment)

    def refuse(self, error: LlmloadError) -> None:
        self.session.stop(Refused(line=str(error)))

    def test_stop(self) -> None:
        self.session.finish_stages()
        self.server.stop()
        summary = self.final_summary()
        self.session.close()
        self._conclude(summary)

    def _on_verdict(self, exit_code: int) -> None:
        self.session.exit_code = exit_code

    def _summary(self, *, complete: bool) -> Summary:
        s = self.session
        summary = build_summary(
            s.config,
            run_id=s.run_id,
            started_at=s.started_at,
            model=s.model,
            views=s.views(),
            records=[s.describe()],
            complete=complete,
            warnings=list(s.warnings),
            stopped=s.stopped,
            saturation=self.conductor.saturation,
            tokenize=self._tokenize,
        )
        return self.server.attach(summary)


class WorkerRole:
    def __init__(self, environment: Environment, runner: WorkerRunner) -> None:
        self._environment = environment
        self._runner = runner
        self.session: ProcessRun | None = None
        self._shipper: Shipper | None = None
        self._pending: list[tuple[Announcement, float, str | None]] = []  # until the run starts
        self.final_text: str | None = None
        self.exit_code: int | None = None  # the master's verdict is the run's
        self._clock = WorkerClock(runner, self._on_clock_offset)
        runner.register_message(PHASE, self._on_phase)
        runner.send_message(READY, None)
        sigint_to_main()

    def _on_clock_offset(self, offset_s: float) -> None:
        if self.session is not None:
            self.session.set_clock_offset(offset_s)

    def _on_phase(self, environment: Environment, msg: Message) -> None:
        data = obj(msg.data, "phase message")
        a, received = _announcement(data), self._clock.wall()
        run = optional_string(data.get("run"), "run")
        if self.session is None:
            self._pending.append((a, received, run))
        elif run in (None, self.session.run_id):  # not a late word about the previous swarm
            self.session.apply(a, received)

    def start(self, config: RunConfig) -> None:
        """Called at test_start, once the master's options have reached this worker."""
        runner = self._runner
        index = max(runner.worker_index, 0)
        check_worker(self._environment, config)
        self.session = session = ProcessRun(config, process_tag=self._tag, user_offset=index * 1_000_000)
        session.set_clock_offset(self._clock.offset_s)
        session.start()
        for a, received, run in self._pending:
            if run in (None, session.run_id):
                session.apply(a, received)
        self._pending.clear()
        self._shipper = Shipper(
            session, runner.send_message, lambda: runner.user_count, config.fleet.report_interval_s
        )
        shipper = self._shipper
        # The master stops the fleet: tell it now, not at the next report.
        session.on_stop = lambda _why: shipper.ship(final=False)
        self._shipper.start()

    def refuse(self, error: LlmloadError) -> None:
        """This worker cannot start its share (its limits, the target's 401): before its users
        start, the master says so for the run, and stops the fleet."""
        self._runner.send_message(REFUSED, {"worker": self._tag, "line": str(error)})

    @property
    def _tag(self) -> str:
        """This worker's name in the run's files and lines: ``worker-<Locust's index>``."""
        return f"worker-{max(self._runner.worker_index, 0)}"

    def interrupt(self) -> None:
        if self.session is not None:
            self.session.stop(Interrupted(stage=max(self.session.stage, 0)))
            hurry(self._environment)
            # Stop now, so the final delta leaves before Locust's own "quit" to the master
            # (our quitting listener runs first: Locust fires quitting in reverse order), which
            # would have the master count this worker as lost with its final still unsent.
            self._runner.stop()

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
