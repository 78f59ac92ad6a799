"""Everything one Locust process shares between its users for one run.

The session tags each request with the stage it was sent in, counts what paces the run as
each ends, hands finished records to its ``Fold`` (their stage's stats, ``requests.jsonl``, the
series: run/fold.py), and applies phase announcements from the conductor.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

import gevent

from llmload.config.settings import RunConfig
from llmload.core.failfast import FailFast
from llmload.core.health import HealthSnapshot
from llmload.core.phases import Phase, Window
from llmload.core.record import NOT_FAILED, OK, RequestRecord
from llmload.core.stages import Announcement, Progress
from llmload.core.stop import Stopped
from llmload.errors import TargetError
from llmload.export.results import ResultsDir, new_run_id
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.timeseries import TimeSeries
from llmload.protocol.jsonvalue import JSON
from llmload.results.build import StageView
from llmload.run.client import ApiClient
from llmload.run.fold import Fold
from llmload.run.monitor import HealthMonitor
from llmload.run.sources import SyntheticTexts, calibrated_source, prompt_source
from llmload.run.tenants import Tenancy
from llmload.target.models import Served, served
from llmload.transport.factory import TransportFactory
from llmload.workload.agent_trace import load_agent_trace
from llmload.workload.agents import SessionAccount
from llmload.workload.prompts import PromptSource

if TYPE_CHECKING:
    pass

_NS = 1_000_000_000
# Corrections larger than this mean the clocks disagree, not that the message was late (a
# worker that starts late applies announcements it queued during its start: seconds, not more).
_MAX_ALIGNMENT_S = 60.0
# A closed-loop user whose request failed waits before its next one, longer the longer the
# process has seen nothing but failures (reset by one success): a server that fails every
# request in microseconds would otherwise get tens of thousands a second from a loop at 100%
# CPU. The first retry waits 20 ms, the seventh and later 1 s.
_BACKOFF_FIRST_S = 0.02
_BACKOFF_MAX_S = 1.0


def make_prompts(config: RunConfig) -> PromptSource:
    return prompt_source(config.workload)


@dataclasses.dataclass(slots=True)
class StageState:
    """One stage as this process saw it."""

    concurrency: int
    rate: float | None = None  # open loop: requests per second over the fleet
    started_ns: int | None = None  # when the stage began, in this process's perf_counter_ns
    window: Window = dataclasses.field(default_factory=Window)
    stats: StageStats = dataclasses.field(default_factory=StageStats)
    health: HealthSnapshot | None = None
    closed: bool = False  # the drain ended: late finishers count as unfinished
    lateness_s: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def window_s(self) -> float:
        w = self.window
        return 0.0 if w.t0_ns is None or w.t1_ns is None else (w.t1_ns - w.t0_ns) / _NS


class ProcessRun:
    """The run state of one process: config, transports, prompts, stages, records."""

    def __init__(self, config: RunConfig, process_tag: str = "local", user_offset: int = 0) -> None:
        self.config = config
        self.process_tag = process_tag
        self.run_id = config.run_id or new_run_id()
        self.results = ResultsDir(config.results_dir, self.run_id)
        local = process_tag == "local"
        self.records = self.results.open_records(
            "requests.jsonl" if local else f"requests-{process_tag}.jsonl", keep_empty=not local
        )
        self.transports = TransportFactory(config.transport)
        self.prompts = make_prompts(config)
        # --tenants: each request's tenant and its prompt (None: no tenants)
        self.tenants = Tenancy(config.workload, self.prompts) if config.workload.tenants else None
        # --agent-trace: the recorded sessions, read once per process (checked at the config)
        trace = config.workload.agent.trace
        self.agent_sessions = load_agent_trace(trace) if trace else ()
        self.health = HealthMonitor()
        self.model = config.request.model
        # Whether requests ask for the server's own timing of each (--server-timings), once
        # start() has seen who serves the target.
        self.asks_server_timings = False
        self.started_at = time.time()
        # A worker's wall clock against its master's (locust/clock.py): the timeline's clock is
        # the master's, as its announcements are stamped on it.
        self.clock_offset_s = 0.0
        self.stages: dict[int, StageState] = {}
        self.fold = Fold(config, self.records, self.stages)
        self.stage = -1  # no stage announced yet: requests count as warm-up of stage 0
        self._client: ApiClient | None = None
        self.texts = SyntheticTexts(config.workload)  # a scenario's self.text(n)
        # Users of different processes must not share prompt salts or request ids.
        self._user_ids = itertools.count(user_offset)
        self.announcements: list[tuple[float, int, str]] = []  # (wall time, stage, phase)
        self.in_flight = 0
        self.active: set[RequestRecord] = set()  # in flight, for live token counts
        self._finished_tokens = 0
        self._sampler: gevent.Greenlet[[], None] | None = None
        self._completed: Counter[int] = Counter()
        self._in_flight_measured: Counter[int] = Counter()
        self._sent_measured: Counter[int] = Counter()
        self.warnings: list[str] = []  # for the summary: what start found doubtful
        # --max-error-rate 1 accepts every failure: a run meant to measure them is not stopped.
        accepts_all = config.checks.max_error_rate is not None and config.checks.max_error_rate >= 1
        self._fail_fast = FailFast(armed=not accepts_all)
        self.stopped: Stopped | None = None  # why the run ends early, once it must
        self.exit_code: int | None = None  # the verdict, once the run has ended (the exporter)
        self.on_stop: Callable[[Stopped], None] | None = None  # the role stops the run
        # --requests: the conductor, asked at once when a request past the count would start
        # (a tick's wait, up to Locust's second in a sweep, would let more in)
        self.on_window_full: Callable[[], object] | None = None
        self._failures_in_a_row = 0

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        verify: bool | str = self.config.transport.ca_file or self.config.transport.verify
        host, request = self.config.host, self.config.request
        try:
            listing: Served | None = served(host, api_key=request.api_key, verify=verify)
        except TargetError:
            if self.model is None:
                raise  # nothing else names the model: the run cannot start
            listing = None  # the requests will tell
        if self.model is None:
            assert listing is not None
            self.model = listing.first(host)
        elif listing is not None and (warning := listing.missing(host, self.model)):
            self.warnings.append(warning)
        for tenant in self.config.workload.tenants:
            if (
                tenant.model is not None
                and listing is not None
                and (warning := listing.missing(host, tenant.model))
            ):
                self.warnings.append(f"tenant {tenant.name}: {warning}")
        self.asks_server_timings = request.server_timings == "on" or (
            request.server_timings == "auto" and listing is not None and "vllm" in listing.owners
        )
        if self.config.workload.tokenize != "off":  # prompt lengths in the server's tokens
            self.prompts, warning = calibrated_source(self.config, self.model, verify)
            self.warnings += [warning] if warning else []
        if self.config.exporter.otlp_endpoint is not None:
            from llmload.export.otlp import RequestSpans  # the otlp extra: imported only when asked

            self.fold.spans = RequestSpans(
                endpoint=self.config.exporter.otlp_endpoint,
                run_id=self.run_id,
                process=self.process_tag,
                model=self.model,
                wall_minus_perf_ns=self.fold.wall_minus_perf_ns,
            )
        self.health.start()
        self._sampler = gevent.spawn(self._sample_in_flight)

    def wall(self) -> float:
        """Now, on the run's timeline (the master's wall clock in a distributed run)."""
        return time.time() - self.clock_offset_s

    def set_clock_offset(self, offset_s: float) -> None:
        self.clock_offset_s = offset_s
        self.fold.set_clock_offset(offset_s)

    def _sample_in_flight(self) -> None:
        while True:
            self.fold.timeseries.sample_in_flight(self.wall(), self.in_flight)
            gevent.sleep(1.0 - self.wall() % 1.0)  # once per second of the timeline

    def close(self) -> None:
        self.fold.close()
        if self._sampler is not None:
            self._sampler.kill(block=False)
        self.health.stop()
        self.transports.close()
        self.records.close()

    # -- the stage protocol ---------------------------------------------------------------------

    def apply(self, a: Announcement, received_wall: float | None = None) -> None:
        """Apply a phase change announced at ``a.wall_time`` by the conductor, once: a worker
        that joins as the run starts can hear one both from the master's broadcast and in the
        history the master sends a joiner, and an old stage's warm-up heard again would take
        the worker back to it."""
        heard = (a.wall_time, a.stage, a.phase.value)
        if heard in self.announcements:
            return
        now_wall, now_ns = self.wall(), time.perf_counter_ns()
        lateness = (now_wall if received_wall is None else received_wall) - a.wall_time
        # The phase began when announced, not when we heard of it (or applied what we heard):
        # back-date our own clock to the announcement, unless the clocks visibly disagree.
        # Every process then agrees on the edge to the precision of its wall clock.
        since = now_wall - a.wall_time
        if 0 <= since <= _MAX_ALIGNMENT_S:
            now_ns -= int(since * _NS)
        self.announcements.append(heard)
        if a.phase is Phase.DONE:
            return
        state = self.stages.setdefault(a.stage, StageState(a.concurrency))
        state.lateness_s[a.phase.value] = round(lateness, 6)
        if a.phase is Phase.WARMUP:
            state.concurrency, state.rate, state.started_ns = a.concurrency, a.rate, now_ns
            if self.stage in self.stages and self.stage != a.stage:
                self.stages[self.stage].closed = True
            self.stage = a.stage
        elif a.phase is Phase.MEASURE:
            state.window.t0_ns = now_ns
            self.health.reset()
        elif a.phase is Phase.DRAIN:
            state.window.t1_ns = now_ns
            state.health = self.health.snapshot()

    def progress(self) -> Progress:
        stage = max(self.stage, 0)
        return Progress(self._completed[stage], self._in_flight_measured[stage], self._sent_measured[stage])

    def completed(self) -> dict[int, int]:
        return dict(self._completed)

    def in_flight_measured(self) -> dict[int, int]:
        return dict(self._in_flight_measured)

    def sent_measured(self) -> dict[int, int]:
        return dict(self._sent_measured)

    def finish_stages(self) -> None:
        """The run ended: close every stage's window that is still open."""
        for state in self.stages.values():
            if state.window.t0_ns is not None and state.window.t1_ns is None:
                state.window.t1_ns = time.perf_counter_ns()
                state.health = self.health.snapshot()

    # -- used by users --------------------------------------------------------------------------

    def new_user_id(self) -> int:
        return next(self._user_ids)

    def client(self) -> ApiClient:
        if self._client is None:
            assert self.model is not None, "ProcessRun.start() resolves the model first"
            self._client = ApiClient(
                self.config.request,
                self.model,
                self.config.timeouts,
                run_id=self.run_id,
                server_timings=self.asks_server_timings,
            )
        return self._client

    def current_state(self) -> tuple[int, StageState | None]:
        return self.stage, self.stages.get(self.stage)

    def current(self) -> tuple[int, Window]:
        """The stage a request starting now belongs to, and its window."""
        stage = max(self.stage, 0)
        state = self.stages.get(stage)
        if state is None:
            state = self.stages.setdefault(stage, StageState(0))
        return stage, state.window

    def request_started(self, stage: int, window: Window) -> bool:
        self.in_flight += 1
        measured = window.phase_at(time.perf_counter_ns()) is Phase.MEASURE
        full = self.config.phases.window_requests
        if measured and full is not None and self._sent_measured[stage] >= full and self.on_window_full:
            self.on_window_full()  # the window closes now: this request is the drain's
            measured = window.phase_at(time.perf_counter_ns()) is Phase.MEASURE
        if measured:
            self._in_flight_measured[stage] += 1
            self._sent_measured[stage] += 1
        return measured

    def on_record(self, record: RequestRecord, counted_in_flight: bool = False) -> None:
        """A request ended: count what paces the run (in flight, completed) now, and fold the
        rest when the event loop is idle (run/fold.py says why)."""
        self.in_flight -= 1
        self._finished_tokens += sum(record.event_tokens) if record.stream else record.output_tokens
        if counted_in_flight:
            self._in_flight_measured[record.stage] -= 1
        self._completed[record.stage] += 1
        self._judge(record)
        # Whether the drain had ended is decided now, not when folded.
        self.fold.add(record, late=self.stages[record.stage].closed and record.phase is Phase.MEASURE)

    def on_session(self, account: SessionAccount) -> None:
        """An agentic session ended: it counts in its stage if it started inside the window.
        Its records were counted on their own, as they ended."""
        if account.measured:
            self.stages[account.stage].stats.sessions.add_session(account)

    def _judge(self, record: RequestRecord) -> None:
        if record.outcome == OK:
            self._failures_in_a_row = 0
        elif record.outcome not in NOT_FAILED:
            self._failures_in_a_row += 1
        stop = self._fail_fast.observe(record)
        if stop is not None and self.stopped is None:
            self.stopped = stop
            if self.on_stop is not None:
                self.on_stop(stop)

    def stop(self, why: Stopped) -> None:
        """The run ends early (interrupted, or another process failed fast): say why."""
        if self.stopped is None:
            self.stopped = why

    def backoff_s(self) -> float:
        """How long a closed-loop user waits after a failed request (0 after a success)."""
        n = self._failures_in_a_row
        return 0.0 if n == 0 else min(_BACKOFF_MAX_S, _BACKOFF_FIRST_S * 2 ** (n - 1))

    @property
    def timeseries(self) -> TimeSeries:
        return self.fold.timeseries

    def fold_pending(self) -> None:
        """Fold every finished record: readers of stats, series and records call this."""
        self.fold.drain()

    def views(self, *, live: bool = False) -> list[StageView]:
        """Every stage so far; ``live``: a window still open counts until now (the web UI's
        view of a running stage), else it counts only once closed (the summary's)."""
        self.fold_pending()
        now_ns = time.perf_counter_ns()
        return [
            StageView(
                index=index,
                concurrency=state.concurrency,
                stats=state.stats,
                window_s=state.window_s or (state.window.open_s(now_ns) if live else 0.0),
                measured=state.window.t0_ns is not None,
                health={self.process_tag: state.health or self.health.snapshot()},
                lateness_s={self.process_tag: state.lateness_s},
                window=state.window,
                rate=state.rate,
            )
            for index, state in sorted(self.stages.items())
        ]

    def take_stats(self) -> dict[int, StageStats]:
        """Hand over what was folded since the last call (a worker ships these as deltas)."""
        self.fold_pending()
        taken = {}
        for index, state in self.stages.items():
            if state.stats.counts or state.stats.outcomes or state.stats.sessions:
                taken[index], state.stats = state.stats, StageStats()
        return taken

    def tokens_received(self) -> int:
        """Output tokens received so far, in-flight requests included (for live progress)."""
        return self._finished_tokens + sum(sum(r.event_tokens) for r in self.active)

    def take_classic(self) -> dict[int, ClassicStats]:
        return self.fold.take_classic()

    def health_now(self) -> dict[str, float | None]:
        """Client health for the live exporter: since the current stage's window opened."""
        self.fold_pending()
        snap = self.health.snapshot()
        per_read = [st.stats.hist["events_per_read"] for st in self.stages.values()]
        reads = sum(h.count for h in per_read)
        events = sum(h.total for h in per_read)
        return {
            "loop_lag_p99_ms": snap.loop_lag_p99_ms,
            "cpu_percent": snap.cpu_percent,
            "events_per_read_mean": events / reads if reads else None,
        }

    def take_timeseries(self) -> TimeSeries:
        return self.fold.take_timeseries()

    def describe(self) -> dict[str, JSON]:
        self.fold_pending()
        return {
            "process": self.process_tag,
            "records": self.records.count,
            "records_file": self.records.path.name,
        }
