"""``summary.json`` as types: the run, its stages, the headline and the verdict.

Every writer builds these objects and every reader gets them back, through one pair of
functions: ``to_json`` (plain JSON values, in field order) and ``from_json`` (a decoded
``summary.json`` of the current version; ``export/rundata.py`` upgrades older ones first). The
types are the codec: msgspec reads and writes them as declared, with no code of their own.
Fields are documented in docs/summary.md; docs/summary.schema.json is the same shape as a JSON
Schema, and the tests validate what ``to_json`` writes against it.

Where a part's keys are the server's or the user's, not ours (the server's ``/metrics``
digest, the options as given), it stays a mapping of JSON values: typing it would be a second
copy of a shape owned elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

import msgspec

from llmload.core.stop import Stopped
from llmload.metrics.confidence import Interval
from llmload.protocol.jsonvalue import JSON, JSONObject
from llmload.results.summary_stage import Stage

SCHEMA_VERSION = 2  # 2: verdicts (exit, run.stopped, attempts, ...); export/rundata.py reads 1

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Level:
    """One load level of the headline: repeated stages at it averaged."""

    concurrency: int | None
    rate_req_per_s: float | None
    output_tok_per_s: float
    spread: tuple[float, float]  # min and max across repeats
    decode_tok_per_s: float | None
    repeats: int = 1
    # with repeats: 95% intervals by stages.csv column (output_tok_per_s, ttft_p99_ms, ...)
    intervals: Mapping[str, Interval] = field(default_factory=dict)
    noisy: tuple[str, ...] = ()  # the columns whose interval is wider than ±5% of the mean
    ttft_p50_ms: float | None = None  # repeats averaged, as output_tok_per_s
    tpot_p50_ms: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Saturation:
    """The lowest level past which more load bought no throughput, only latency
    (``llmload/results/saturation.py``)."""

    concurrency: int | None
    rate_req_per_s: float | None
    output_tok_per_s: float
    reason: str
    # --until-saturated: the sweep ended after the level that showed it; these were not run
    stopped_sweep: bool = False
    levels_not_run: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Cheapest:
    """The stage whose output tokens cost least, among those that met every SLO."""

    stage: int
    concurrency: int | None
    rate_req_per_s: float | None
    usd_per_m_output_tokens: float
    under_slo: bool  # False: the run had no --slo, so every stage counted


@dataclass(frozen=True, slots=True, kw_only=True)
class Headline:
    single_stream_tok_per_s: float | None
    peak_tok_per_s: float | None
    peak_concurrency: int | None
    peak_rate_req_per_s: float | None
    half_speed_concurrency: int | None
    levels: tuple[Level, ...]
    cheapest: Cheapest | None = None  # None: no cost given, or no stage met the SLOs
    saturation: Saturation | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCount:
    """One kind of failure over the run, with one answer the server gave for it."""

    kind: str
    count: int
    status: int | None
    message: str  # the server's own words, shortened; "" when it said nothing

    def describe(self) -> str:
        said = f"HTTP {self.status}" if self.status and self.status != 200 else self.kind
        return f'{said} "{self.message}"' if self.message else said


@dataclass(frozen=True, slots=True, kw_only=True)
class Exit:
    """The verdict as recorded: exit code and name, the one line, every reason that held."""

    code: int
    name: str
    line: str
    reasons: tuple[str, ...]
    errors: tuple[ErrorCount, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LostWorker:
    """A worker of a distributed run that never sent its final delta, and the most it may
    have taken along since the last one it sent (``run/fleet.py``)."""

    worker: str
    client_id: str
    silent_s: float  # since its last delta
    last_seq: int
    requests_missing_at_most: int
    output_tokens_missing_at_most: int | None  # None: the run had no --max-tokens bound


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerClock:
    """A worker's wall clock against the master's (``core/clock.py``): what its phase edges and
    per-second series were moved by to stand on the master's timeline."""

    worker: str
    offset_s: float  # ahead of the master's clock; negative: behind
    uncertainty_s: float  # half the shortest round trip
    probes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    id: str
    started_at: str | None
    target: str
    model: str | None
    scenario: str | None
    options: Mapping[str, JSON]  # RunConfig.public_dict(): the options as the run used them
    records: tuple[Mapping[str, JSON], ...]  # the requests*.jsonl files, one per process
    reproducibility: Mapping[str, JSON]
    stopped: Stopped | None  # how the run ended early, if it did (verdict.py)
    lost_workers: tuple[LostWorker, ...] = ()
    clocks: tuple[WorkerClock, ...] = ()  # a distributed run's workers, as last estimated


@dataclass(frozen=True, slots=True)
class Rerun:
    """``llmload sweep --processes auto``'s client-bound levels: run again with more processes
    (as a run of their own, ``run_id``), or not, and why (``cli/rerun.py``)."""

    levels: tuple[int, ...]
    processes_before: int
    health: str  # what flagged them
    processes: int | None = None  # None: not run again
    why_not: str | None = None
    run_id: str | None = None
    client_bound_after: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    schema_version: int
    complete: bool
    headline: Headline | None
    run: RunInfo
    server: Mapping[str, JSON]  # what the server said about itself (target/fingerprint.py)
    stages: tuple[Stage, ...]
    warnings: tuple[str, ...]
    exit: Exit | None = None  # None until the run is judged (run/finish.py)
    reruns: tuple[Rerun, ...] = ()  # llmload sweep's client-bound levels run again, or why not

    def with_exit(self, verdict: Exit) -> Summary:
        return replace(self, exit=verdict)


def to_json(value: object) -> JSON:
    """Plain JSON values (objects in field order), as the file holds them: arrays as lists, a
    NaN as null."""
    out: JSON = msgspec.json.decode(msgspec.json.encode(value))
    return out


def from_json(cls: type[T], data: JSONObject) -> T:
    """``cls`` from its JSON object, as its fields declare. Keys it does not declare are ignored
    (another part of the schema, or a writer's extra); a declared key that is missing takes
    the field's default, and one without a default is a ``ValueError`` naming its path."""
    return msgspec.convert(data, cls)


def read(data: JSONObject) -> Summary:
    """A summary of the current version from its decoded JSON."""
    return from_json(Summary, data)
