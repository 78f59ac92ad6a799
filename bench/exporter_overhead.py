"""CPU the live Prometheus exporter adds to a single-process Locust run, scraped every second.

    .venv/bin/python bench/exporter_overhead.py [--repeats 5] [--seconds 20] [--users 100]
                                                [--smoke] [--out bench/results/exporter_overhead.json]

Two simulators (``--ttft-ms 20 --step-ms 10``: 100 events/s per stream, so ~10k events/s at 100
users each) serve two headless single-process ``locust -f locustfiles/chat.py`` runs side by
side: one with ``--prometheus-port`` (and this script scraping its ``/metrics`` every second, as
Prometheus would), one without. Running the pair at the same time puts the machine's noise on
both alike; which simulator and start slot gets the exporter alternates between repeats. Each
Locust process's CPU comes from ``/proc`` (psutil) over a window after the ramp-up and before
the stop, divided by the events its simulator wrote meanwhile (``/sim/counters``), so a run that
got fewer events is not read as cheaper. Reported: the ratio of the medians (on / off) over the
repeats, and the median of the paired ratios.

``--smoke`` (CI) is one pair of 6-second runs and writes nothing unless ``--out`` is given."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
import urllib.request
from array import array
from pathlib import Path
from typing import Any

import psutil

from llmload.core.record import Phase, RequestRecord
from llmload.export.prometheus import render
from llmload.metrics.classic import ClassicStats
from llmload.sim.process import SimProcess, start_sim

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "exporter_overhead.json"
RAMP_S = 3.0  # excluded at the start: users spawning, connections opening
TAIL_S = 1.0  # excluded at the end: users stopping


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _scrape_every_second(
    port: int, stop: threading.Event, window: threading.Event, counts: dict[str, int]
) -> None:
    while not stop.wait(1.0):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                counts["bytes"] = len(resp.read())
                counts["ok"] += window.is_set()
        except OSError:
            # Counted in the measured window only: before it Locust is starting, after it stopping.
            counts["failed"] += window.is_set()


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


class PortTaken(Exception):
    pass


class Run:
    """One headless single-process Locust run against its own simulator, exporter on or off."""

    def __init__(
        self, sim: SimProcess, args: argparse.Namespace, seconds: float, exporter: bool, results: Path
    ) -> None:
        self.sim, self.exporter, port = sim, exporter, _free_port()
        command = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(args.locustfile),
            "--headless",
            "-u",
            str(args.users),
            "-r",
            str(args.users),
            "-t",
            f"{round(seconds)}s",
            "--host",
            sim.url,
            "--max-tokens",
            "200",
            "--ignore-eos",
            "--warmup-requests",
            "0",
            "--results-dir",
            str(results),
            "--only-summary",
            "--loglevel",
            "WARNING",
            *(["--prometheus-port", str(port)] if exporter else []),
        ]
        self.scrapes = {"ok": 0, "failed": 0, "bytes": 0}
        self.stop, self.window = threading.Event(), threading.Event()
        self.proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.locust = psutil.Process(self.proc.pid)
        if exporter:
            threading.Thread(
                target=_scrape_every_second, args=(port, self.stop, self.window, self.scrapes), daemon=True
            ).start()
        self.marks: list[tuple[float, int, float]] = []

    def mark(self) -> None:
        """CPU seconds of the Locust process, events the simulator wrote, now."""
        self.marks.append(
            (_cpu_s(self.locust), self.sim.counters()["events_written_total"], time.monotonic())
        )
        if len(self.marks) == 1:
            self.window.set()
        else:
            self.window.clear()

    def finish(self) -> dict[str, Any]:
        self.stop.set()
        _out, err = self.proc.communicate(timeout=300)
        if self.proc.returncode != 0 and b"Address already in use" in err:
            raise PortTaken  # the free port was taken meanwhile by another process
        if self.proc.returncode != 0:
            raise SystemExit(f"locust failed ({self.proc.returncode}): {err.decode()[-2000:]}")
        (cpu0, events0, t0), (cpu1, events1, t1) = self.marks
        events, cpu = events1 - events0, cpu1 - cpu0
        return {
            "exporter": self.exporter,
            "window_s": round(t1 - t0, 3),
            "events": events,
            "events_per_s": round(events / (t1 - t0)),
            "cpu_s": round(cpu, 3),
            "cpu_share": round(cpu / (t1 - t0), 4),
            "cpu_us_per_event": round(1e6 * cpu / max(events, 1), 3),
            "scrapes_ok": self.scrapes["ok"],
            "scrapes_failed": self.scrapes["failed"],
            "exposition_bytes": self.scrapes["bytes"],
        }


def pair(
    sims: tuple[SimProcess, SimProcess],
    args: argparse.Namespace,
    seconds: float,
    on_first: bool,
    results: Path,
) -> list[dict[str, Any]]:
    """Exporter on and off side by side, so the machine's noise falls on both alike."""
    runs = [
        Run(sims[i], args, seconds, exporter=(i == 0) == on_first, results=results / str(i)) for i in range(2)
    ]
    time.sleep(RAMP_S)
    for run in runs:
        run.mark()
    time.sleep(seconds - RAMP_S - TAIL_S)
    for run in runs:
        run.mark()
    results_of = []
    for run in runs:
        with contextlib.suppress(PortTaken):
            results_of.append(run.finish())
    return results_of if len(results_of) == 2 else pair(sims, args, seconds, on_first, results)


def components(events_per_s: float) -> dict[str, float]:
    """The exporter's own costs, timed in this process: steadier than whole-process CPU."""
    r = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=0, sent_ns=0)
    stamps = [20_000_000 + i * 10_000_000 for i in range(200)]  # the runs' 200 tokens, 10 ms apart
    r.event_ns, r.event_tokens = array("q", stamps), array("l", [1] * 200)
    r.first_token_ns = r.first_output_ns = stamps[0]
    r.last_token_ns, r.done_ns, r.output_tokens, r.prompt_tokens = stamps[-1], stamps[-1], 200, 100
    stats = ClassicStats()
    add_s = min(timeit.repeat(lambda: stats.add(r), number=200, repeat=5)) / 200

    class Source:
        def classic(self) -> dict[int, ClassicStats]:
            return {0: stats}

        def gauges(self) -> dict[str, float]:
            return {"users": 100, "in_flight": 100, "workers": 1, "stage": 0, "concurrency": 100}

        def health(self) -> dict[str, dict[str, float | None]]:
            return {"local": {"loop_lag_p99_ms": 1.0, "cpu_percent": 30.0, "events_per_read_mean": 1.0}}

        def labels(self) -> dict[str, str]:
            return {"run_id": "r", "target": "http://127.0.0.1:8000", "model": "m", "scenario": "chat"}

    render_s = min(timeit.repeat(lambda: render(Source()), number=20, repeat=5)) / 20
    return {
        "classic_add_us_per_event": round(add_s * 1e6 / 200, 3),
        "render_ms_per_scrape": round(render_s * 1e3, 3),
        "scrape_us_per_event_at_1_per_s": round(render_s * 1e6 / events_per_s, 4),
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    on = [r["cpu_us_per_event"] for r in runs if r["exporter"]]
    off = [r["cpu_us_per_event"] for r in runs if not r["exporter"]]
    paired = []
    for a, b in zip(runs[::2], runs[1::2], strict=True):
        with_exporter, without = (a, b) if a["exporter"] else (b, a)
        paired.append(with_exporter["cpu_us_per_event"] / without["cpu_us_per_event"])
    ratio = statistics.median(on) / statistics.median(off)
    return {
        "median_cpu_us_per_event_on": statistics.median(on),
        "median_cpu_us_per_event_off": statistics.median(off),
        "ratio_on_off": round(ratio, 4),
        "added_percent": round(100 * (ratio - 1), 2),
        "median_paired_ratio": round(statistics.median(paired), 4),
        "exporter_served": all(
            r["scrapes_ok"] > 0 and not r["scrapes_failed"] for r in runs if r["exporter"]
        ),
    }


def _git_revision() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs, exporter on and off")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each Locust run")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--locustfile", type=Path, default=REPO / "locustfiles" / "chat.py")
    parser.add_argument("--smoke", action="store_true", help="one pair of 6 s runs (CI)")
    parser.add_argument("--out", type=Path, help=f"result JSON (default {DEFAULT_OUT} unless --smoke)")
    args = parser.parse_args()
    repeats, seconds = (1, 6.0) if args.smoke else (args.repeats, args.seconds)
    runs: list[dict[str, Any]] = []
    sim_args = ["--ttft-ms", "20", "--step-ms", "10"]
    with tempfile.TemporaryDirectory() as tmp, start_sim(sim_args) as sim_a, start_sim(sim_args) as sim_b:
        for i in range(repeats):
            # Alternate which simulator and which start slot gets the exporter.
            runs += pair((sim_a, sim_b), args, seconds, on_first=i % 2 == 0, results=Path(tmp))
            print(json.dumps(runs[-2:]), flush=True)
    result = {
        "benchmark": "exporter_overhead",
        "command": " ".join(["python", "bench/exporter_overhead.py", *sys.argv[1:]]),
        "git_revision": _git_revision(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "smoke": args.smoke,
        "load_average_1m": os.getloadavg()[0],
        "users": args.users,
        "seconds": seconds,
        "repeats": repeats,
        "summary": summarize(runs),
        "runs": runs,
        "components": components(statistics.median(r["events_per_s"] for r in runs)),
    }
    print(json.dumps({**result["summary"], **result["components"]}, indent=2))
    out = args.out or (None if args.smoke else DEFAULT_OUT)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
