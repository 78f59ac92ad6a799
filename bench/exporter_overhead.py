"""CPU the live Prometheus exporter adds to a single-process Locust run, scraped every second.

    .venv/bin/python bench/exporter_overhead.py [--repeats 5] [--seconds 20] [--users 100]
                                                [--smoke] [--out bench/results/exporter_overhead.json]

One simulator (``--ttft-ms 20 --step-ms 10``: 100 events/s per stream, so ~10k events/s at 100
users) serves a headless single-process ``locust -f locustfiles/chat.py`` run, alternately with
``--prometheus-port`` (and this script scraping ``/metrics`` every second, as Prometheus would)
and without it. The Locust process's CPU comes from ``/proc`` (psutil) over a window that starts
after the ramp-up and ends before the stop, and is divided by the events the simulator wrote in
that window (its ``/sim/counters``), so a run that happened to get fewer events is not read as
cheaper. The result is the ratio of the medians, exporter on / off, over the repeats; runs
alternate on/off so a drifting machine affects both alike.

``--smoke`` (CI) is one pair of 6-second runs and writes nothing unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
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
import urllib.request
from pathlib import Path
from typing import Any

import psutil

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


def _scrape_every_second(port: int, stop: threading.Event, counts: dict[str, int]) -> None:
    while not stop.wait(1.0):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                counts["bytes"] = len(resp.read())
                counts["ok"] += 1
        except OSError:
            counts["failed"] += 1


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def one_run(sim: SimProcess, users: int, seconds: float, exporter: bool, results: Path) -> dict[str, Any]:
    port = _free_port()
    command = [sys.executable, "-m", "locust", "-f", str(REPO / "locustfiles" / "chat.py"), "--headless",
               "-u", str(users), "-r", str(users), "-t", f"{round(seconds)}s", "--host", sim.url,
               "--max-tokens", "200", "--ignore-eos", "--results-dir", str(results), "--only-summary",
               "--loglevel", "WARNING", *(["--prometheus-port", str(port)] if exporter else [])]
    scrapes = {"ok": 0, "failed": 0, "bytes": 0}
    stop = threading.Event()
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    scraper = threading.Thread(target=_scrape_every_second, args=(port, stop, scrapes), daemon=True)
    if exporter:
        scraper.start()
    try:
        locust = psutil.Process(proc.pid)
        time.sleep(RAMP_S)
        cpu0, events0, t0 = _cpu_s(locust), sim.counters()["events_written_total"], time.monotonic()
        time.sleep(seconds - RAMP_S - TAIL_S)
        cpu1, events1, t1 = _cpu_s(locust), sim.counters()["events_written_total"], time.monotonic()
    finally:
        stop.set()
        _out, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"locust failed ({proc.returncode}): {err.decode()[-2000:]}")
    events = events1 - events0
    return {"exporter": exporter, "window_s": round(t1 - t0, 3), "events": events,
            "events_per_s": round(events / (t1 - t0)), "cpu_s": round(cpu1 - cpu0, 3),
            "cpu_share": round((cpu1 - cpu0) / (t1 - t0), 4),
            "cpu_us_per_event": round(1e6 * (cpu1 - cpu0) / max(events, 1), 3),
            "scrapes_ok": scrapes["ok"], "scrapes_failed": scrapes["failed"],
            "exposition_bytes": scrapes["bytes"]}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    on = [r["cpu_us_per_event"] for r in runs if r["exporter"]]
    off = [r["cpu_us_per_event"] for r in runs if not r["exporter"]]
    ratio = statistics.median(on) / statistics.median(off)
    return {"median_cpu_us_per_event_on": statistics.median(on),
            "median_cpu_us_per_event_off": statistics.median(off),
            "ratio_on_off": round(ratio, 4), "added_percent": round(100 * (ratio - 1), 2),
            "exporter_served": all(r["scrapes_ok"] > 0 and not r["scrapes_failed"]
                                   for r in runs if r["exporter"])}


def _git_revision() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs, exporter on and off")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each Locust run")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="one pair of 6 s runs (CI)")
    parser.add_argument("--out", type=Path, help=f"result JSON (default {DEFAULT_OUT} unless --smoke)")
    args = parser.parse_args()
    repeats, seconds = (1, 6.0) if args.smoke else (args.repeats, args.seconds)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        for i in range(repeats):
            order = (True, False) if i % 2 == 0 else (False, True)
            for exporter in order:
                runs.append(one_run(sim, args.users, seconds, exporter, Path(tmp)))
                print(json.dumps(runs[-1]), flush=True)
    result = {
        "benchmark": "exporter_overhead",
        "command": " ".join(["python", "bench/exporter_overhead.py", *sys.argv[1:]]),
        "git_revision": _git_revision(), "cores": os.cpu_count(), "python": platform.python_version(),
        "platform": platform.platform(), "smoke": args.smoke, "load_average_1m": os.getloadavg()[0],
        "users": args.users, "seconds": seconds, "repeats": repeats,
        "summary": summarize(runs), "runs": runs,
    }
    print(json.dumps(result["summary"], indent=2))
    out = args.out or (None if args.smoke else DEFAULT_OUT)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
