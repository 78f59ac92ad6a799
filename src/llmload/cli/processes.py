"""``--processes auto``: as many local worker processes as the planned load needs, or a refusal.

One worker process carries a measured number of SSE events per CPU-second (``llmload
calibrate``, cached per machine). A plan brings its highest level's streams times one stream's
event rate (``target/pace.py``, an upper bound), or its highest request rate times the most tokens
a request may bring. Each process is planned to ``HEADROOM`` of its capacity: a stage is flagged
client-bound at 80% of a core (``core/health.py``), and timestamps taken by a loop that is busy
most of the time are already late. When the cores this machine can give do not carry the plan,
the run is refused before it starts, with the figures: a client-bound number is a plan error,
not a result.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmload.config import values
from llmload.config.apikey import read_api_key
from llmload.config.options import OPTIONS, add_arguments, defaults
from llmload.errors import PlanError
from llmload.workload.ramps import Ramp

HEADROOM = 0.6
# What any process carries, however slow the machine (a quarter of what `llmload calibrate` measures
# one-per-read on a 2-core VM): a plan under it needs neither the server's pace nor a calibration.
SURE_EVENTS_PER_S = 10_000.0


@dataclass(frozen=True, slots=True)
class Load:
    """What the plan asks of the client at its peak."""

    streams: int | None  # closed loop: the most concurrent streams; None for request rates
    rate_req_per_s: float | None  # open loop: the highest rate
    tokens_per_request: int  # the most a request may bring (--max-tokens' upper bound)

    def events_per_s(self, stream_tok_s: float) -> float:
        if self.streams is not None:
            return self.streams * stream_tok_s
        return (self.rate_req_per_s or 0.0) * self.tokens_per_request

    def text(self, stream_tok_s: float | None) -> str:
        if self.streams is None:
            return f"{self.rate_req_per_s:g} req/s x up to {self.tokens_per_request} tokens"
        pace = "" if stream_tok_s is None else f" x {stream_tok_s:,.0f} tok/s each"
        return f"{self.streams:,} streams{pace}"


@dataclass(frozen=True, slots=True)
class Asked:
    """What a command plans its processes and its wait by, as its Locust child will read it."""

    model: str | None
    api_key: str | None  # read from the variable --api-key-env names
    levels: tuple[int, ...]
    rates: tuple[float, ...]
    ramp: Ramp | None
    tokens_per_request: int  # the most a request may bring: --max-tokens' upper bound

    def load(self) -> Load:
        """The peak of a sweep's (or a probe's) stages."""
        tokens, ramp = self.tokens_per_request, self.ramp
        if ramp is not None and ramp.kind == "rate":
            return Load(None, max(ramp.levels()), tokens)
        if self.rates:
            return Load(None, max(self.rates), tokens)
        if ramp is not None:
            return Load(int(max(ramp.levels())), None, tokens)
        return Load(max(self.levels), None, tokens)


def asked_of(parsed: Mapping[str, object], after: Sequence[str] = ()) -> Asked:
    """The options of Locust's table as the command parsed them (by name; what else it parsed
    is left), and as given after ``--`` (``llmload search --by rate`` passes ``--rates`` there;
    a sweep's ``--model`` goes there), each read by its declaration: the words after ``--`` are
    parsed by the table's own parser."""
    tail, _locusts_own = _tail_parser().parse_known_args([str(w) for w in after])
    mine = {dest: value for dest, value in parsed.items() if dest in _DESTS}
    given = argparse.Namespace(**{**defaults(), **mine, **vars(tail)})
    return Asked(
        model=values.text_or_none(given.model, given),
        api_key=read_api_key(given.api_key_env, os.environ),
        levels=values.levels(given.levels, given),
        rates=values.rates(given.rates, given),
        ramp=values.ramp(given.ramp, given),
        tokens_per_request=values.output_lengths(given.max_tokens, given).upper,
    )


_DESTS = frozenset(o.dest for o in OPTIONS)


def _tail_parser() -> argparse.ArgumentParser:
    # Exact flags only (Locust's own words stay unread), and none of the table's defaults: what
    # the tail does not give is the command's, or the table's.
    usage = "... -- [Locust's options and llmload's: `llmload options` lists them]"
    parser = argparse.ArgumentParser(prog="llmload", usage=usage, add_help=False, allow_abbrev=False)
    add_arguments(parser, OPTIONS, env=False)
    for action in parser._actions:  # the actions add_arguments made: no API hands them back
        action.default = argparse.SUPPRESS
    return parser


@dataclass(frozen=True, slots=True)
class Cores:
    usable: int  # the CPUs this process may run on
    kept: int  # left to a server on this machine
    why_kept: str

    @property
    def free(self) -> int:
        return max(0, self.usable - self.kept)


def cores(server_here: bool) -> Cores:
    usable = len(os.sched_getaffinity(0))
    if server_here and usable > 1:
        return Cores(usable, 1, "1 left to the server on this machine")
    return Cores(usable, 0, "")


@dataclass(frozen=True, slots=True)
class Plan:
    load: Load
    stream_tok_s: float | None  # None: the load is too small to need it
    events_per_cpu_s: float  # one process's capacity
    processes: int
    cores: Cores

    @property
    def events_per_s(self) -> float:
        return self.load.events_per_s(self.stream_tok_s or 0.0)

    @property
    def fits(self) -> bool:
        return self.processes <= max(1, self.cores.free)

    def line(self) -> str:
        """The figures: what the load brings, what a process carries, what that needs."""
        count = f"{self.processes} process{'es' if self.processes > 1 else ''}"
        return (
            f"{self.load.text(self.stream_tok_s)} bring up to {self.events_per_s:,.0f} events/s; "
            f"one process carries {self.events_per_cpu_s * HEADROOM:,.0f} "
            f"({HEADROOM:.0%} of its {self.events_per_cpu_s:,.0f} events per CPU-second): {count}"
        )

    def cores_text(self) -> str:
        kept = f" ({self.cores.why_kept})" if self.cores.kept else ""
        return f"{self.cores.free} of {self.cores.usable} cores free{kept}"


def plan(load: Load, stream_tok_s: float | None, events_per_cpu_s: float, where: Cores) -> Plan:
    needed = load.events_per_s(stream_tok_s or 0.0) / (events_per_cpu_s * HEADROOM)
    return Plan(load, stream_tok_s, events_per_cpu_s, max(1, math.ceil(needed)), where)


def refusal(planned: Plan) -> PlanError:
    """The plan the machine's free cores cannot carry, refused with its figures."""
    return PlanError(
        f"this machine cannot run the plan without being client-bound: {planned.line()}, "
        f"and it has {planned.cores_text()}. Run workers on other machines (--master and "
        f"--worker), or the Kubernetes job with {planned.processes} workers (docs/kubernetes.md); "
        f"lower the load; or give --processes N to run anyway"
    )


def needs_pace(load: Load) -> bool:
    """Whether the plan could need more than one process: only then is the server's pace asked."""
    if load.streams is None:
        return False
    return load.streams * _FASTEST_STREAM_TOK_S > SURE_EVENTS_PER_S * HEADROOM


# No engine streams one request faster than this (speculative decoding on a small model reaches
# a few hundred): a plan of fewer streams than SURE / this is one process without asking.
_FASTEST_STREAM_TOK_S = 1_000.0


def server_is_here(host: str, embedded: bool) -> bool:
    """Whether the server shares this machine's cores: an embedded simulator or a loopback host."""
    from urllib.parse import urlsplit

    name = (urlsplit(host).hostname or "").lower()
    return embedded or name == "localhost" or name.startswith("127.") or name == "::1"


def resolve(count: int | None, host: str, asked: Asked, load: Load, *, server_here: bool, prog: str) -> int:
    """The worker processes to start (0: one process, no ``--processes``): the ``count`` given,
    or what ``auto`` (None) plans for ``load``, said in one line. Raises ``PlanError`` when the
    machine cannot carry it."""
    if count is not None:
        return count
    where = cores(server_here)
    pace = None
    if needs_pace(load):
        from llmload.target.pace import stream_rate

        pace = stream_rate(host, asked.model, asked.api_key)
        if pace is None:  # the run itself will say what the server answers
            print(
                f"{prog}: --processes auto: the server streamed no pace to plan by: one process", flush=True
            )
            return 0
    if load.events_per_s(pace or 0.0) <= SURE_EVENTS_PER_S * HEADROOM:
        return 0  # one process carries it on any machine: no line, no calibration
    from llmload.cli.calibrate import capacity

    found = capacity()
    planned = plan(load, pace, found.events_per_cpu_s, where)
    if not planned.fits:
        raise refusal(planned)
    print(f"{prog}: --processes auto: {planned.line()}; {planned.cores_text()}", flush=True)
    return planned.processes if planned.processes > 1 else 0
