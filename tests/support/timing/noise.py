"""What a window of time was like on this machine: the canary's wake-ups, read back.

The canary (``canary.py``) appends ``(wake_ns, late_ns)`` records in time order; a window is
found by bisection over the fixed-size records, so a judge reads the few seconds of a test out
of a file that covers the whole suite.
"""

from __future__ import annotations

import math
import mmap
import os
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tests.support.timing.canary import CPU_RECORD, PERIOD_NS, RECORD


class Stat(StrEnum):
    """The statistic a claim is about, and so the statistic of the noise it is judged against:
    a median against the noise's median, a p99 against its p99, a claim about every request
    against the largest lateness seen."""

    MEDIAN = "p50"
    P99 = "p99"
    EVERY = "max"


def quantile(ordered: Sequence[float], stat: Stat) -> float:
    """``stat`` of already sorted values (nearest rank); 0 for none."""
    if not ordered:
        return 0.0
    if stat is Stat.EVERY:
        return ordered[-1]
    q = 0.5 if stat is Stat.MEDIAN else 0.99
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass(frozen=True, slots=True)
class Wakes:
    """One canary thread's lateness over a window, in ms, sorted."""

    late_ms: tuple[float, ...]

    def at(self, stat: Stat) -> float:
        return quantile(self.late_ms, stat)

    def share_over(self, ms: float) -> float:
        """The share of wake-ups later than ``ms``."""
        if not self.late_ms:
            return 0.0
        over = sum(1 for late in self.late_ms if late > ms)
        return over / len(self.late_ms)


class CanaryLog:
    """The canary's files in ``directory``: ``plain.bin`` always, ``fifo.bin`` where allowed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def has_fifo(self) -> bool:
        path = self.directory / "fifo.bin"
        return path.exists() and path.stat().st_size > 0

    def wakes(self, kind: str, t0_ns: int, t1_ns: int) -> Wakes:
        """The wake-ups of ``kind`` between ``t0_ns`` and ``t1_ns`` (CLOCK_MONOTONIC)."""
        path = self.directory / f"{kind}.bin"
        self._wait_past(path, t1_ns)
        if not path.exists() or path.stat().st_size < RECORD.size:
            return Wakes(())
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            n = len(data) // RECORD.size
            lo, hi = _first_at(data, n, t0_ns), _first_at(data, n, t1_ns + 1)
            # A wake-up is stamped when it happens: one a stall delayed past the window's end
            # was late inside it, and counts.
            if hi < n:
                woke, late = RECORD.unpack_from(data, hi * RECORD.size)
                if woke - late - PERIOD_NS <= t1_ns:
                    hi += 1
            late = sorted(RECORD.unpack_from(data, i * RECORD.size)[1] / 1e6 for i in range(lo, hi))
        return Wakes(tuple(late))

    def cpu_pressure(self, t0_ns: int, t1_ns: int) -> float | None:
        """The share of the window in which some task waited for a CPU (the kernel's pressure
        stall information, from the samples just around the window); None where there is none."""
        edges = self._around("pressure.bin", RECORD, t0_ns, t1_ns)
        if edges is None:
            return None
        (a_ns, a_us), (b_ns, b_us) = edges
        return (b_us - a_us) * 1000 / (b_ns - a_ns)

    def outside_cpu(self, t0_ns: int, t1_ns: int) -> float | None:
        """The share of the machine's CPUs that processes other than the tests' own (or the
        hypervisor) took in the window; None where it was not read."""
        edges = self._around("cpu.bin", CPU_RECORD, t0_ns, t1_ns)
        if edges is None:
            return None
        (a_ns, a_busy, a_ours), (b_ns, b_busy, b_ours) = edges
        outside_us = max(0, (b_busy - a_busy) - (b_ours - a_ours))
        return outside_us * 1000 / ((b_ns - a_ns) * (os.cpu_count() or 1))

    def _around(
        self, name: str, record: struct.Struct, t0_ns: int, t1_ns: int
    ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The two samples of a cumulative count just around a window (every 100 ms)."""
        path = self.directory / name
        self._wait_past(path, t1_ns, timeout_s=0.3, record=record)
        if not path.exists() or path.stat().st_size < 2 * record.size:
            return None
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            n = len(data) // record.size
            lo = max(0, _first_at(data, n, t0_ns, record) - 1)
            hi = min(n - 1, _first_at(data, n, t1_ns, record))
            if hi <= lo:
                return None
            a, b = (record.unpack_from(data, i * record.size) for i in (lo, hi))
        return (a, b) if b[0] > a[0] else None

    @staticmethod
    def _wait_past(path: Path, t_ns: int, timeout_s: float = 0.5, record: struct.Struct = RECORD) -> None:
        """The canary flushes every few ms: wait until its file reaches ``t_ns``, or stops
        growing (a canary that ended)."""
        give_up = time.monotonic() + timeout_s
        sizes: list[int] = []
        while time.monotonic() < give_up:
            size = path.stat().st_size if path.exists() else 0
            if size >= record.size:
                with path.open("rb") as f:
                    f.seek(size - size % record.size - record.size)
                    if record.unpack(f.read(record.size))[0] >= t_ns:
                        return
            sizes.append(size)
            if len(sizes) > 5 and sizes[-5] == size:  # no flush in 25 ms: it is not running
                return
            time.sleep(0.005)


def _first_at(data: mmap.mmap, n: int, t_ns: int, record: struct.Struct = RECORD) -> int:
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if record.unpack_from(data, mid * record.size)[0] < t_ns:
            lo = mid + 1
        else:
            hi = mid
    return lo
