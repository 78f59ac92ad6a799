"""A run's lifecycle, the same whether one process runs the users (``roles.LocalRole``) or a
master merges its workers' (``master.MasterRole``): a run set up when first needed (each web UI
swarm is a run of its own), the exporter and the web UI's live view at the start, the results
rewritten as each stage ends, the verdict at the end, and the exporter's last push at exit.

A role says what its run is made of: where its numbers are kept (``state``: a ``ProcessRun`` or
a ``Fleet``), how its summary is built from them, and what it holds per run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from llmload.config.settings import RunConfig
from llmload.errors import LlmloadError
from llmload.export.prometheus import ExporterHandle, ExportSource
from llmload.export.pushgateway import finish as finish_exporter
from llmload.export.results import ResultsDir
from llmload.locust.control import (
    exit_code_on_error,
    headless,
    next_run,
    sigint_to_main,
    stop_run,
    target_users,
)
from llmload.locust.load import settled
from llmload.metrics import wire
from llmload.results.summary import Level, Summary
from llmload.run.conductor import Conductor
from llmload.run.finish import conclude, start_exporter_if, write_data, write_summary
from llmload.run.live import LiveView, RunState
from llmload.run.server_watch import ServerWatch

if TYPE_CHECKING:  # importing locust patches the process: the roles leave that to the plugin
    from locust.env import Environment


class RunLifecycle(ABC):
    def __init__(
        self, environment: Environment, config: RunConfig, configure: Callable[[], RunConfig]
    ) -> None:
        self._environment = environment
        self._config = config  # checked at start-up, so a bad option stops Locust at once
        self._configure = configure  # a web UI swarm reads the start form again
        self._runs = 0
        self._last_exporter: tuple[RunConfig, str] | None = None  # the latest run's, at exit
        self.final_text: str | None = None
        self.exit_code: int | None = None
        self.exporter: ExporterHandle | None = None
        self.live: LiveView | None = None  # the web UI's view of the latest run
        self.finished: Path | None = None  # the results of the latest run that ended
        sigint_to_main()

    # -- what a role's run is made of ------------------------------------------------------------

    @property
    @abstractmethod
    def config(self) -> RunConfig: ...

    @property
    @abstractmethod
    def run_id(self) -> str: ...

    @property
    @abstractmethod
    def results(self) -> ResultsDir: ...

    @property
    @abstractmethod
    def conductor(self) -> Conductor: ...

    @property
    @abstractmethod
    def server(self) -> ServerWatch: ...

    @property
    @abstractmethod
    def state(self) -> RunState:
        """Where the run's numbers are kept: its stages' views, series and announcements."""

    @abstractmethod
    def _summary(self, *, complete: bool) -> Summary: ...

    @abstractmethod
    def _on_verdict(self, exit_code: int) -> None:
        """The run has its verdict (the exporter's ``exit_code`` gauge reads it)."""

    @abstractmethod
    def refuse(self, error: LlmloadError) -> None:
        """The run cannot start (the target refused it): its verdict says so with ``error``'s
        line, not as an interruption (the exit that follows stops Locust like a Ctrl+C)."""

    @abstractmethod
    def _disarm(self) -> None:
        """A web UI swarm has ended: the next start sets up a run of its own."""

    # -- the lifecycle -------------------------------------------------------------------------

    def _next_config(self) -> RunConfig:
        """The config of the next run: a headless run's is the one checked at start-up; a web UI
        swarm's is the start form's, with a run id of its own."""
        self._runs += 1
        if self._runs == 1 and headless(self._environment):
            return self._config
        return next_run(self._configure(), self._runs)

    def _go_live(self, source: ExportSource, tokens_received: Callable[[], int]) -> None:
        """At the start: the exporter on this run's numbers, the live view, the stages ticking."""
        if self.exporter is not None:  # the previous swarm's: the port is this run's now
            self.exporter.close()
        self.exporter = start_exporter_if(self.config, source)
        self._last_exporter = (self.config, self.run_id)
        self.live = LiveView(self.config, self.run_id, source, self.state, self.conductor.controller)
        environment = self._environment
        if environment.shape_class is None:
            self.conductor.start_ticking(users=target_users(environment), done=lambda: stop_run(environment))
        else:
            self.conductor.tick_between_shape_ticks(settled(environment))
        self.conductor.start_progress(tokens_received)

    def write_so_far(self) -> None:
        """The results so far, summary.json without a verdict: a finished stage survives an
        interrupted run (the end writes them again, with the last deltas in)."""
        self._write_data()
        write_summary(self.results, self._summary(complete=False))

    def final_summary(self) -> Summary:
        """The whole run's summary, the files beside it written; summary.json itself is
        written once, with the verdict (``_conclude``)."""
        self._write_data()
        return self._summary(complete=True)

    def _write_data(self) -> None:
        state = self.state
        write_data(
            self.results,
            [wire.encode(v.stats) for v in state.views()],
            state.timeseries.rows(state.announcements),
        )

    def _levels_so_far(self) -> tuple[Level, ...]:
        head = self._summary(complete=False).headline
        return () if head is None else head.levels

    def _conclude(self, summary: Summary) -> None:
        """The verdict: its exit code for the process, its line for the user."""
        self.exit_code, self.final_text = conclude(
            self.config, self.results, summary, exit_code_on_error=exit_code_on_error(self._environment)
        )
        self._environment.process_exit_code = self.exit_code
        self._on_verdict(self.exit_code)
        self.finished = self.results.path
        if not headless(self._environment):  # the UI stays up: say this swarm's verdict now
            print(self.final_text, flush=True)
            self._disarm()

    def after_quit(self) -> None:
        if self.exporter is not None and self._last_exporter is not None:  # final push, and linger
            config, run_id = self._last_exporter
            finish_exporter(config.exporter, self.exporter, run_id)
