"""`llmload calibrate`: how many SSE events one worker process of this machine parses per
CPU-second, measured once and kept for ``--processes auto``.

The measurement is a real run: the chat scenario under Locust, one process, against the
simulator on loopback at one token per event every 20 ms (``--ttft-ms 0 --step-ms 20``), so
reads hold one event each, the costliest way to receive them. The capacity is the window's
output tokens per second over the process's CPU share in that window, taken at about three
quarters of a core, where a worker sleeps and wakes between reads less than at half a core and
more than when saturated. A process kept from its core by others finds several events per read,
each costing less, and would measure too high: such a measurement is taken again, and never kept.

The answer is cached per machine (host name, CPU model and count, Python, llmload) in
``$XDG_CACHE_HOME/llmload/capacity.json``; ``LLMLOAD_CAPACITY`` (events per CPU-second) gives a
figure known otherwise and skips the measurement.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from llmload.config.commands import declare
from llmload.errors import ConfigError, LlmloadError
from llmload.results.exitcodes import ExitCode

ENV = "LLMLOAD_CAPACITY"
STREAMS = 800
SECONDS = 12
MAX_EVENTS_PER_READ = 1.2


@dataclass(frozen=True, slots=True)
class Capacity:
    events_per_cpu_s: float
    source: str  # "measured", "cached ..." or the variable's name

    def line(self) -> str:
        return f"one process parses {self.events_per_cpu_s:,.0f} events per CPU-second ({self.source})"


def machine_key() -> str:
    from importlib.metadata import version

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return " | ".join(
        (platform.node(), cpu, f"{os.cpu_count()} CPUs", platform.python_version(), version("llmload"))
    )


def cache_path() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "llmload" / "capacity.json"


def capacity(*, measure: bool = True) -> Capacity:
    """The figure from ``LLMLOAD_CAPACITY``, this machine's cache, or a new measurement."""
    given = os.environ.get(ENV)
    if given:
        try:
            value = float(given)
        except ValueError:
            raise ConfigError(ENV, given, "give events per CPU-second, e.g. 40000") from None
        if value <= 0:
            raise ConfigError(ENV, given, "must be > 0")
        return Capacity(value, ENV)
    cached = _cached()
    if cached is not None:
        return cached
    if not measure:
        raise LlmloadError("no capacity measured on this machine yet: run `llmload calibrate`")
    return calibrate()


def _cached() -> Capacity | None:
    try:
        data = orjson.loads(cache_path().read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    entry = data.get(machine_key()) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        return None
    value, when = entry.get("events_per_cpu_s"), entry.get("measured_at")
    if not isinstance(value, int | float) or value <= 0:
        return None
    return Capacity(float(value), f"measured {when}, cached in {cache_path()}")


def calibrate(streams: int = STREAMS, seconds: int = SECONDS) -> Capacity:
    """Measure, print one line, and cache the figure for this machine."""
    print(f"llmload: measuring one process's capacity on this machine ({seconds} s, once)", flush=True)
    for _ in range(2):
        events_per_s, cpu_percent, per_read = _measure(streams, seconds)
        if cpu_percent <= 0 or events_per_s <= 0:
            raise LlmloadError("the calibration run measured nothing: see `llmload calibrate` for its output")
        if per_read <= MAX_EVENTS_PER_READ:
            break
        print(f"llmload: its reads held {per_read:.2f} events each: the machine was busy; measuring again")
    else:
        # A process kept from its core finds several events per read, each costing less: a
        # figure measured so is too high, and plans built on it would be client-bound.
        raise LlmloadError(
            f"the calibration's reads held {per_read:.2f} events each, twice: the machine is too busy "
            f"to measure one event per read. Run `llmload calibrate` on a quiet machine, or set "
            f"{ENV} (events per CPU-second; bench/capacity.py measures it)"
        )
    value = round(events_per_s / (cpu_percent / 100))
    _store(value, streams, events_per_s, cpu_percent)
    result = Capacity(
        value,
        f"measured now: {events_per_s:,.0f} events/s on {cpu_percent:.0f}% of a core, "
        f"{per_read:.2f} per read",
    )
    print(f"llmload: {result.line()}", flush=True)
    return result


def _measure(streams: int, seconds: int) -> tuple[float, float, float]:
    """(output tokens per second of the window, the process's CPU percent over it, and the
    token-bearing events per read: 1 is the regime measured)."""
    from llmload.cli.child import run_child
    from llmload.export.rundata import read_summary
    from llmload.scenarios import locate
    from llmload.sim.process import start_sim

    with tempfile.TemporaryDirectory() as tmp, start_sim(["--ttft-ms", "0", "--step-ms", "20"]) as sim:
        command = [
            sys.executable, "-m", "locust", "-f", str(locate("chat")), "--headless",
            "-u", str(streams), "-r", str(streams), "-t", f"{seconds}s", "--host", sim.url,
            "--max-tokens", "128", "--ignore-eos", "--prompt-tokens", "32", "--tokenize", "off",
            "--warmup-s", "3", "--results-dir", tmp, "--run-id", "calibrate",
            "--no-history",  # it measures this client, not a server: no run of any history
            "--only-summary", "--loglevel", "WARNING",
        ]  # fmt: skip
        proc = run_child(command, quiet=True)
        if proc.returncode == ExitCode.INTERRUPTED:
            raise KeyboardInterrupt  # a cut measurement is never kept: said as any Ctrl+C is
        try:
            summary = read_summary(Path(tmp) / "calibrate")
        except LlmloadError:
            raise LlmloadError(
                f"the calibration run wrote no summary (exit {proc.returncode}): {proc.stderr[-500:]}"
            ) from None
    stage = summary.stages[0]
    health = list(stage.client_health.values())
    if not health or not stage.duration_s:
        return 0.0, 0.0, 0.0
    per_read = stage.events_per_read.mean if stage.events_per_read is not None else 0.0
    return stage.window_output_tokens / stage.duration_s, max(h.cpu_percent for h in health), per_read


def _store(value: float, streams: int, events_per_s: float, cpu_percent: float) -> None:
    path = cache_path()
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data[machine_key()] = {
        "events_per_cpu_s": value,
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "streams": streams,
        "events_per_s": round(events_per_s),
        "cpu_percent": round(cpu_percent, 1),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    partial.replace(path)  # atomic: two runs calibrating at once leave one whole file


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llmload calibrate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    declare(p, "--streams", "--seconds", "--show", defaults={"--streams": STREAMS, "--seconds": SECONDS})
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.show:
        print(f"llmload: {capacity(measure=False).line()}")
        return 0
    calibrate(args.streams, args.seconds)
    print(f"llmload: kept in {cache_path()} for --processes auto")
    return 0
