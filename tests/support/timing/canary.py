"""The canary: a process apart from everything under test that records how late it wakes up.

A timing test's noise must be measured by something the test does not measure, or a slower
client would widen its own bound. This process does nothing but sleep a millisecond and note
how late each wake-up was, for as long as the tests run, in two threads:

- ``plain``, at normal priority, as the client and the simulator run: on a busy machine each of
  its wake-ups waits for a CPU as theirs do, so it sees what any process here sees;
- ``fifo``, at SCHED_FIFO where allowed (root, or CAP_SYS_NICE): the machine's floor, what even
  a process that claims the CPU first cannot avoid (a hypervisor taking the core away).

A third thread reads the machine's load every 100 ms, in two files:

- ``pressure.bin``, ``(t_ns, waited_us)``: the kernel's CPU pressure (``/proc/pressure/cpu``,
  the microseconds in which some runnable task waited for a CPU). A sleeper such as the canary
  is woken ahead of busy processes, so its lateness stays small while busy ones queue for a
  core; the pressure sees that queue, whoever causes it.
- ``cpu.bin``, ``(t_ns, busy_us, ours_us)``: the CPU time every CPU spent busy (``/proc/stat``,
  stolen time included) and the part of it spent by the tests' own processes (the canary's
  parent and everything under it, reaped children included). What is left is CPU that
  something outside the tests took: a CPU-heavy loop beside them, or the hypervisor.

Each wake-up thread appends ``(wake_ns, late_ns)`` records (two little-endian int64s, on the same
CLOCK_MONOTONIC as every ``perf_counter_ns`` stamp on this machine) to its own file, flushed
every few milliseconds, so a judge in another process can read the noise of any window.

    python -m tests.support.timing.canary DIR     # until SIGTERM, or until its parent exits
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import threading
import time
from pathlib import Path

PERIOD_NS = 1_000_000
FLUSH_NS = 10_000_000
RECORD = struct.Struct("<qq")
CPU_RECORD = struct.Struct("<qqq")
KINDS = ("plain", "fifo")
PRESSURE = Path("/proc/pressure/cpu")
LOAD_PERIOD_S = 0.1
_TICK_US = 1_000_000 // os.sysconf("SC_CLK_TCK")


def _sample(path: Path, stop: threading.Event, fifo: bool) -> None:
    if fifo:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except (AttributeError, OSError):
            return  # not allowed here: no fifo file, and the judge says so
    period_s = PERIOD_NS / 1e9
    pending = bytearray()
    with path.open("ab", buffering=0) as out:
        flushed = time.perf_counter_ns()
        while not stop.is_set():
            start = time.perf_counter_ns()
            time.sleep(period_s)
            woke = time.perf_counter_ns()
            pending += RECORD.pack(woke, max(0, woke - start - PERIOD_NS))
            if woke - flushed >= FLUSH_NS:
                out.write(pending)
                pending.clear()
                flushed = woke
        out.write(pending)


def waited_us(text: str) -> int | None:
    """The ``some`` line's ``total``: microseconds in which some task waited for a CPU."""
    for line in text.splitlines():
        if line.startswith("some "):
            fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
            return int(fields["total"]) if fields.get("total", "").isdigit() else None
    return None


def busy_ticks(stat: str) -> int:
    """Clock ticks every CPU spent doing anything but idling or waiting on I/O, from the
    ``cpu`` line of ``/proc/stat`` (user, nice, system, irq, softirq, steal)."""
    fields = stat.split("\n", 1)[0].split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    return user + nice + system + irq + softirq + steal


def process_ticks(stat: str) -> tuple[int, int]:
    """``(ppid, ticks)`` from one ``/proc/PID/stat``: its own CPU and its reaped children's."""
    fields = stat.rsplit(")", 1)[1].split()  # the name in parentheses may hold anything
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def tree_ticks(root: int) -> int:
    """CPU ticks of ``root`` and every process under it. A child reaped between two readings
    moves into its parent's count, so the sum only drops when a process leaves the tree."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent[int(name)], ticks[int(name)] = process_ticks(Path(f"/proc/{name}/stat").read_text())
            except (OSError, ValueError, IndexError):
                continue  # it ended while being read
    total = 0
    for pid, own in ticks.items():
        up, steps = pid, 0
        # the table is read one file at a time: a reused pid could close a loop, hence the bound
        while up > 1 and up != root and steps < 64:
            up, steps = parent.get(up, 0), steps + 1
        if up == root:
            total += own
    return total


def _load(directory: Path, stop: threading.Event, root: int) -> None:
    try:
        PRESSURE.read_text()
        pressure = True
    except OSError:
        pressure = False  # no pressure stall information here (an older kernel, or PSI off)
    with (
        (directory / "pressure.bin").open("ab", buffering=0) as waited_out,
        (directory / "cpu.bin").open("ab", buffering=0) as cpu_out,
    ):
        while not stop.wait(LOAD_PERIOD_S):
            t_ns = time.perf_counter_ns()
            try:
                waited = waited_us(PRESSURE.read_text()) if pressure else None
                busy = busy_ticks(Path("/proc/stat").read_text())
                ours = tree_ticks(root)
            except OSError:
                return
            if waited is not None:
                waited_out.write(RECORD.pack(t_ns, waited))
            cpu_out.write(CPU_RECORD.pack(t_ns, busy * _TICK_US, ours * _TICK_US))


def main(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    parent = os.getppid()
    threads = [
        threading.Thread(target=_sample, args=(directory / f"{kind}.bin", stop, kind == "fifo"), daemon=True)
        for kind in KINDS
    ]
    threads.append(threading.Thread(target=_load, args=(directory, stop, parent), daemon=True))
    for thread in threads:
        thread.start()
    (directory / "ready").touch()
    while not stop.wait(0.5):
        if os.getppid() != parent:  # the tests ended without stopping it
            stop.set()
    for thread in threads:
        thread.join(timeout=2)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
