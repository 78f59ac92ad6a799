"""Mergeable per-stage state: what a stage's summary is computed from.

A ``StageStats`` folds finished records into log-bucket histograms and counters, so its size is
bounded whatever the request count, and two of them merge exactly (workers ship deltas; the
master merges). Which requests count where follows docs/metrics.md:

- latency histograms and request outcomes: requests *sent* inside the measured window;
- output throughput: tokens whose *read* fell inside the window, from every request, warm-up and
  drain included, so requests straddling an edge contribute exactly their tokens inside it;
- request throughput: requests *completed* inside the window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from llmload.core.phases import Phase, Window
from llmload.core.record import NOT_FAILED, OK, UNFINISHED, RequestRecord
from llmload.metrics import derive
from llmload.metrics.catalog import LATENCY_KEYS, PER_REQUEST
from llmload.metrics.histogram import LogHistogram, fill
from llmload.metrics.http_phases import HttpPhases
from llmload.metrics.reasoning import ReasoningSide
from llmload.metrics.server_side import ServerSide
from llmload.metrics.sessions import SessionSide
from llmload.metrics.slo import SloRule, request_meets, request_ms

# Latency histograms (LATENCY_KEYS, the catalog's) are in ns; count histograms in their own units.
COUNT_KEYS = (
    "tokens_per_event",
    "events_per_read",
    "output_tokens",
    "prompt_tokens",
    "images",
    "image_bytes",
)


@dataclass(slots=True)
class Counts:
    """A stage's counters; which requests each counts follows the module's docstring."""

    records_warmup: int = 0  # finished records by the phase they were sent in
    records_measure: int = 0
    records_drain: int = 0
    window_output_tokens: int = 0  # tokens read inside the window, from any request
    window_completed: int = 0  # requests completed inside the window
    window_prompt_tokens: int = 0  # the rest: requests sent inside the window
    events: int = 0
    reads: int = 0
    output_tokens: int = 0
    prompt_tokens_requested: int = 0
    cached_prompt_tokens: int = 0
    prompt_tokens_cache_reported: int = 0  # prompt tokens of requests whose usage had a cache count
    slo_met: int = 0  # requests that met every request-level SLO (goodput)
    # Requested against counted, over the requests that know both: the prompt's length as
    # llmload built it and as the server's usage counted it; max_tokens and what came back.
    prompt_compared_requested: int = 0
    prompt_compared_server: int = 0
    max_tokens_asked: int = 0
    output_tokens_asked: int = 0

    def count_record(self, phase: Phase) -> None:
        if phase is Phase.WARMUP:
            self.records_warmup += 1
        elif phase is Phase.MEASURE:
            self.records_measure += 1
        else:
            self.records_drain += 1

    @property
    def records(self) -> int:
        return self.records_warmup + self.records_measure + self.records_drain

    def merge(self, other: Counts) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in self.__slots__)


_HISTOGRAMS = (*LATENCY_KEYS, *COUNT_KEYS)


@dataclass(slots=True)
class StageStats:
    hist: dict[str, LogHistogram] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    outcomes: Counter[str] = field(default_factory=Counter)
    finish_reasons: Counter[str] = field(default_factory=Counter)
    token_sources: Counter[str] = field(default_factory=Counter)
    # TTFT per workload label ("group=2", "turn=3"): prefix-cache groups, conversation turns
    ttft_by_label: dict[str, LogHistogram] = field(default_factory=dict)
    # Outcomes of every request of the stage, warm-up and drain included: a run whose window
    # never opened can still say why (every request failed, none finished).
    attempts: Counter[str] = field(default_factory=Counter)
    # The first (HTTP status, server answer) seen per failure kind: the verdict quotes it.
    error_samples: dict[str, tuple[int | None, str]] = field(default_factory=dict)
    # The same, per request name of a scenario (``self.client.chat(..., name="rag")``): one
    # level deep, only for named requests, so the built-in users pay nothing for it.
    server_side: ServerSide = field(default_factory=ServerSide)
    http_phases: HttpPhases = field(default_factory=HttpPhases)
    reasoning: ReasoningSide = field(default_factory=ReasoningSide)
    sessions: SessionSide = field(default_factory=SessionSide)  # agentic sessions, turns' cache reuse
    # None: this is one name's share, broken down no further.
    by_name: dict[str, StageStats] | None = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every histogram present, on a new accumulator and on one read back from a message or
        # file that carried fewer (metrics/wire.py): the merge reads each by name.
        fill(self.hist, _HISTOGRAMS)

    def _named(self, r: RequestRecord) -> StageStats | None:
        if r.name is None or self.by_name is None:
            return None
        named = self.by_name.get(r.name)
        if named is None:
            named = self.by_name[r.name] = StageStats(by_name=None)
        return named

    def add(
        self,
        r: RequestRecord,
        window: Window,
        slo: Sequence[SloRule] | None = None,
        measures: derive.Measures | None = None,
    ) -> None:
        """``slo``: the request-level objectives a successful measured request is judged by
        (goodput's ``slo_met``); None: not judged. ``measures``: the request's, as the fold
        derived them once for all its consumers; None: derived here."""
        m = derive.measure(r) if measures is None else measures
        if (named := self._named(r)) is not None:
            named.add(r, window, slo, m)
        c = self.counts
        outcome = r.outcome.value  # counted by value: the counters' keys are JSON's
        self.attempts[outcome] += 1
        if outcome not in NOT_FAILED and outcome not in self.error_samples:
            self.error_samples[outcome] = (r.status, r.error_detail or "")
        c.count_record(r.phase)
        c.window_output_tokens += self._tokens_in_window(r, window)
        if window.contains(r.done_ns) and outcome != UNFINISHED:
            c.window_completed += 1
        if r.phase is not Phase.MEASURE:
            return
        self.outcomes[outcome] += 1
        c.events += r.events
        c.reads += r.reads
        if r.prompt_tokens is not None:
            c.window_prompt_tokens += r.prompt_tokens
        if r.prompt_tokens_requested is not None:
            c.prompt_tokens_requested += r.prompt_tokens_requested
        if r.cached_tokens is not None and r.prompt_tokens is not None:
            c.cached_prompt_tokens += r.cached_tokens
            c.prompt_tokens_cache_reported += r.prompt_tokens
        if outcome != OK:
            return
        self.token_sources[r.token_source.value] += 1
        if r.finish_reason is not None:
            self.finish_reasons[r.finish_reason] += 1
        c.output_tokens += r.output_tokens
        # An image's tokens are the server's vision encoder's (by size), not text llmload
        # built to a length: such prompts are not compared.
        if r.prompt_tokens is not None and r.prompt_tokens_requested is not None and not r.images:
            c.prompt_compared_requested += r.prompt_tokens_requested
            c.prompt_compared_server += r.prompt_tokens
        if r.max_tokens is not None:
            c.max_tokens_asked += r.max_tokens
            c.output_tokens_asked += r.output_tokens
        self.reasoning.add(r)
        if r.labels:
            self.sessions.add_turn(r)
        self._add_latencies(r, m)
        if slo is not None and request_meets(slo, request_ms(r, m)):
            c.slo_met += 1

    def add_late(self, r: RequestRecord, window: Window) -> None:
        """A request sent in the window that finished only after the drain's bound: it counts
        as unfinished (no latency invented), its tokens inside the window still count."""
        if (named := self._named(r)) is not None:
            named.add_late(r, window)
        self.counts.records_measure += 1
        self.counts.window_output_tokens += self._tokens_in_window(r, window)
        self.outcomes[UNFINISHED.value] += 1
        self.attempts[UNFINISHED.value] += 1

    def add_tokens_read_in_window(self, r: RequestRecord, window: Window) -> None:
        """Tokens that an earlier stage's request read inside this stage's (open) window."""
        if (named := self._named(r)) is not None:
            named.add_tokens_read_in_window(r, window)
        if window.t0_ns is not None:
            self.counts.window_output_tokens += derive.tokens_in(r, window.t0_ns, window.t1_ns)

    @staticmethod
    def _tokens_in_window(r: RequestRecord, window: Window) -> int:
        if window.t0_ns is None:
            return 0
        if not r.stream:
            return r.output_tokens if window.contains(r.done_ns) else 0
        return derive.tokens_in(r, window.t0_ns, window.t1_ns)

    def _add_latencies(self, r: RequestRecord, m: derive.Measures) -> None:
        """Every latency and count histogram of one successful measured request."""
        h = self.hist
        for key, sample in PER_REQUEST:
            value = sample(r, m)
            if value is not None:
                h[key].add(value)
        if r.images:  # only requests that sent images
            h["images"].add(r.images)
        if r.image_bytes:
            h["image_bytes"].add(r.image_bytes)
        if m.ttft is not None:
            for name, label in r.labels:
                self.ttft_by_label.setdefault(f"{name}={label}", LogHistogram()).add(m.ttft)
        self.server_side.add(r, m)
        self.http_phases.add(r)
        runs = m.reads
        h["itl"].add_all(*runs.itl())
        h["chunk_gap"].add_all(runs.gaps())
        h["events_per_read"].add_all(runs.events)
        h["tokens_per_event"].add_all(r.event_tokens[1:])

    def merge(self, other: StageStats) -> None:
        for key, hist in other.hist.items():
            self.hist[key].merge(hist)
        self.counts.merge(other.counts)
        self.outcomes.update(other.outcomes)
        self.finish_reasons.update(other.finish_reasons)
        self.token_sources.update(other.token_sources)
        for label, h in other.ttft_by_label.items():
            self.ttft_by_label.setdefault(label, LogHistogram()).merge(h)
        self.attempts.update(other.attempts)
        self.server_side.merge(other.server_side)
        self.http_phases.merge(other.http_phases)
        self.reasoning.merge(other.reasoning)
        self.sessions.merge(other.sessions)
        for kind, sample in other.error_samples.items():
            self.error_samples.setdefault(kind, sample)
        if self.by_name is not None:
            for name, stats in (other.by_name or {}).items():
                self.by_name.setdefault(name, StageStats(by_name=None)).merge(stats)
