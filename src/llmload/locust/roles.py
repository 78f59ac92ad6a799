"""What a process that runs users does at each point of a run.

- ``LocalRole``: one process conducts the stages, runs the users and writes the results.
- ``WorkerRole``: runs users, applies the master's phase announcements, ships stats deltas and a
  final delta once its users stopped; writes its own ``requests-<worker>.jsonl``.

The master's side is ``master.MasterRole``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import gevent
import greenlet

from llmload.config import RunConfig
from llmload.export.prometheus import ExporterHandle
from llmload.export.pushgateway import finish as finish_exporter
from llmload.locust.plans import make_conductor, planned_concurrency
from llmload.phases import Phase
from llmload.run.export_source import SessionSource
from llmload.run.finish import conclude, start_exporter_if, write_results
from llmload.run.server_watch import ServerWatch
from llmload.run.session import Session
from llmload.run.shipping import PHASE, Shipper
from llmload.run.summarize import build_summary
from llmload.stages import Announcement


def _announcement(data: dict[str, Any]) -> Announcement:
    return Announcement(
        data["stage"], Phase(data["phase"]), data["wall_time"], data["concurrency"], data.get("rate")
    )


class LocalRole:
    def __init__(self, environment: Any, config: RunConfig) -> None:
        self.session = Session(config)
        self.conductor = make_conductor(environment, config, self._announce, self.session.progress)
        self._environment = environment
        self.server = ServerWatch(config, planned_concurrency(environment, config))
        self.final_text: str | None = None
        self.exit_code: int | None = None
        self.exporter: ExporterHandle | None = None
        self.session.on_stop = lambda _why: stop_run(environment)

    def _announce(self, a: Announcement) -> None:
        finished = self.session.stage
        self.session.apply(a)
        self.server.on_phase(a)
        if finished >= 0 and (a.phase is Phase.DONE or a.stage != finished):
            self.write(complete=False)  # a finished stage survives an interrupted run

    def test_start(self) -> None:
        self.server.start()
        self.session.start()
        users = running_users(self._environment)
        self.exporter = start_exporter_if(self.session.config, SessionSource(self.session, users))
        if self._environment.shape_class is None:
            self.conductor.start_ticking()
        self.conductor.start_progress(self.session.tokens_received)

    def test_stopping(self) -> None:
        if self.conductor.cut_short():
            self.interrupt()
        self.conductor.stop()

    def interrupt(self) -> None:
        """SIGINT or SIGTERM: Locust's shutdown began before the run ended by itself."""
        if self.exit_code is None:
            self.session.stop({"by": "interrupt", "stage": max(self.session.stage, 0)})
            hurry(self._environment)

    def test_stop(self) -> None:
        self.session.finish_stages()
        self.server.stop()
        summary = self.write(complete=True)
        self.session.close()
        self.exit_code, self.final_text = conclude(
            self.session.config,
            self.session.results,
            summary,
            exit_code_on_error=exit_code_on_error(self._environment),
        )
        self._environment.process_exit_code = self.session.exit_code = self.exit_code

    def after_quit(self) -> None:
        if self.exporter is not None:  # the final push, and the linger for the last scrape
            finish_exporter(self.session.config.exporter, self.exporter, self.session.run_id)

    def write(self, *, complete: bool) -> dict[str, Any]:
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
        )
        self.server.attach(summary)
        write_results(
            s.results, summary, [v.stats.to_dict() for v in s.views()], s.timeseries.rows(s.announcements)
        )
        return summary


class WorkerRole:
    def __init__(self, environment: Any) -> None:
        self._environment = environment
        self.session: Session | None = None
        self._shipper: Shipper | None = None
        self._pending: list[tuple[Announcement, float]] = []
        self.final_text: str | None = None
        self.exit_code: int | None = None  # the master's verdict is the run's
        environment.runner.register_message(PHASE, self._on_phase)
        _sigint_to_main()

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
        self.session = session = Session(config, process_tag=f"worker-{index}", user_offset=index * 1_000_000)
        session.start()
        for a, received in self._pending:
            session.apply(a, received)
        self._pending.clear()
        self._shipper = Shipper(
            session, runner.send_message, lambda: runner.user_count, config.fleet.report_interval_s
        )
        shipper = self._shipper
        # The master stops the fleet: tell it now, not at the next report.
        session.on_stop = lambda _why: shipper.ship(final=False)
        self._shipper.start()

    def interrupt(self) -> None:
        if self.session is not None:
            self.session.stop({"by": "interrupt", "stage": max(self.session.stage, 0)})
            hurry(self._environment)
            # Stop now, so the final delta leaves before Locust's own "quit" to the master
            # (our quitting listener runs first: Locust fires quitting in reverse order), which
            # would have the master count this worker as lost with its final still unsent.
            self._environment.runner.stop()

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


def stop_run(environment: Any) -> None:
    """End the run from inside it (the first requests all failed): as when its time is up."""
    runner = environment.runner
    headless = environment.parsed_options is None or environment.parsed_options.headless
    gevent.spawn(runner.quit if headless else runner.stop)


def hurry(environment: Any) -> None:
    """An interrupted run stops now: its in-flight requests are recorded as unfinished instead
    of being given the drain's minutes to finish."""
    environment.stop_timeout = 0


def _sigint_to_main() -> None:
    """A worker's Ctrl+C raises KeyboardInterrupt in its main greenlet only.

    A terminal signals every process of a ``--processes`` run at once; Python raises the
    KeyboardInterrupt in whichever greenlet runs at that moment, often a user's, and gevent
    prints that user's traceback before passing the interrupt on to the main greenlet. Raised
    there directly, Locust's own shutdown follows as before, without the traceback.
    """
    main = gevent.get_hub().parent

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        if greenlet.getcurrent() is main:
            raise KeyboardInterrupt
        main.throw(KeyboardInterrupt)

    signal.signal(signal.SIGINT, on_sigint)


def exit_code_on_error(environment: Any) -> int:
    """Locust's own code for "requests failed" (``--exit-code-on-error``; its default is ours)."""
    return int(getattr(environment.parsed_options, "exit_code_on_error", 1))


def running_users(environment: Any) -> Callable[[], int]:
    """The users Locust runs now (the exporter's ``llmload_users``)."""
    return lambda: int(environment.runner.user_count)
