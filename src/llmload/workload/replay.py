"""When a trace's requests are sent: its window, sped up or slowed down, once or in a loop.

A replay is an open-loop schedule (``arrivals.py``) whose times come from a trace instead of a
random process. ``--trace-window START:END`` keeps the entries with ``START <= t < END`` (seconds
of the trace, from its first entry), ``--trace-speed F`` divides every time by F, and
``--trace-loop`` repeats the window back to back. One pass lasts the window's length when END is
given; otherwise up to the last entry plus the trace's mean gap, so that a looped trace keeps its
rate across the seam and one pass of n requests lasts n mean gaps.

Distributed runs split it as they split arrivals: process ``share`` of ``shares`` takes every
``shares``-th request of the (looped) sequence, so each request is sent by exactly one process.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from llmload.errors import ConfigError
from llmload.workload.traces import Trace, TraceEntry

# A pass of requests that all share one time still needs a length (the window must be > 0).
_SHORTEST_PASS_S = 0.001


@dataclass(frozen=True, slots=True)
class ReplaySpec:
    """``--trace-speed``, ``--trace-window`` (as start and end seconds) and ``--trace-loop``."""

    speed: float = 1.0
    start_s: float = 0.0
    end_s: float | None = None  # None: the trace's end
    loop: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise ConfigError("--trace-speed", self.speed, "must be a number > 0 (2: twice as fast)")
        if not (math.isfinite(self.start_s) and self.start_s >= 0):
            raise ConfigError("--trace-window", self.start_s, "START must be >= 0 seconds")
        if self.end_s is not None and not self.end_s > self.start_s:
            window = f"{self.start_s:g}:{self.end_s:g}"
            raise ConfigError("--trace-window", window, "END must be greater than START")


def parse_window(text: str | None) -> tuple[float, float | None]:
    """``START:END`` in seconds of the trace; either side may be left out (``60:``, ``:120``)."""
    if not text:
        return 0.0, None
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError(text)
        return float(start or 0), (float(end) if end.strip() else None)
    except ValueError:
        raise ConfigError("--trace-window", text, "give START:END in seconds, e.g. 60:120 or 60:") from None


@dataclass(frozen=True, slots=True)
class Replay:
    """The entries of one pass and their send times in seconds from the replay's start."""

    entries: tuple[TraceEntry, ...] = field(repr=False)
    offsets_s: tuple[float, ...] = field(repr=False)
    pass_s: float  # one pass, on the replay's clock (after the speed)
    loop: bool = False

    @classmethod
    def of(cls, trace: Trace, spec: ReplaySpec) -> Replay:
        end = math.inf if spec.end_s is None else spec.end_s
        entries = tuple(e for e in trace.entries if spec.start_s <= e.t_s < end)
        if not entries:
            window = f"{spec.start_s:g}:{'' if spec.end_s is None else f'{spec.end_s:g}'}"
            problem = f"no requests in it: {trace.name} spans 0 to {trace.span_s:g} s"
            raise ConfigError("--trace-window", window, problem)
        if spec.end_s is not None:
            length = spec.end_s - spec.start_s
        else:
            span, n = entries[-1].t_s - spec.start_s, len(entries)
            length = span * n / (n - 1) if n > 1 else span
        offsets = tuple((e.t_s - spec.start_s) / spec.speed for e in entries)
        return cls(entries, offsets, max(length / spec.speed, _SHORTEST_PASS_S), spec.loop)

    @property
    def requests_per_s(self) -> float:
        """The mean rate of one pass."""
        return len(self.entries) / self.pass_s

    @property
    def duration_s(self) -> float:
        """How long the whole replay sends requests: one pass, or forever when looped."""
        return math.inf if self.loop else self.pass_s

    def schedule(self, share: int = 0, shares: int = 1) -> Iterator[tuple[float, int, int]]:
        """This process's requests: (seconds from the start, pass number, index in the pass)."""
        if not 0 <= share < shares:
            raise ValueError(f"share {share} of {shares}")
        n = len(self.entries)
        number = share
        while self.loop or number < n:
            done, index = divmod(number, n)
            yield done * self.pass_s + self.offsets_s[index], done, index
            number += shares
