"""Capacity: SSE events parsed per CPU-second by one llmload worker process, full recording on.

    .venv/bin/python bench/capacity.py [--repeats 3] [--smoke] [--out PATH]

Timing is ignored; the number is events / CPU time of the client process over a window. The
client is llmload's worker (``harness/llmload_client.py``: session, client, lean transport,
``requests.jsonl``, ``StageStats``, ``TimeSeries``, exporter state, one Locust request event per
request), in its own process pinned to the last CPU; the server is pinned to the first.

- ``many per read``: a raw server far ahead (``harness/blaster.py``, 1,000-event responses
  written at once) and 8 streams: every read takes what the socket holds (~200 events).
- ``one per read``: the simulator, ``--ttft-ms 0 --step-ms 20``, 1,000 streams of 128 tokens
  (51,200 events/s offered, near what one worker can take): reads hold one event, a few two.
- ``one per read, half load``: the same at 500 streams (25,600 events/s; no goal). A worker
  with CPU to spare sleeps between the simulator's steps and pays a wake-up for a few reads at
  a time, so its CPU per event is higher: capacity is what a loaded worker sustains, and this
  row shows how far the figure moves with load.

Beside each, the split of the cost per event from ``harness/costs.py`` (no sockets): framing
and parsing to a record, and folding the record (what ``ProcessRun.on_record`` does); and the
floor of any gevent client on the same server and CPU, ``harness/gevent_floor.py``: the same
streams, each read only counted.
Goals (issue 8): >= 300,000 and >= 50,000 events per CPU-second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import blaster, costs, results
from harness.stats import median

from llmload.sim.process import start_sim

HERE = Path(__file__).resolve().parent
GOALS: dict[str, int | None] = {
    "many_per_read": 300_000,
    "one_per_read": 50_000,
    "one_per_read_half_load": None,
}


def measure(
    url: str,
    streams: int,
    warmup: float,
    seconds: float,
    tokens: int,
    *,
    prefix: list[str],
    floor: str | None = None,
) -> dict[str, Any]:
    """``floor``: None for llmload's worker, ``wait-first`` or ``naive`` for the bare floors."""
    client = ["gevent_floor.py"] if floor else ["llmload_proc.py", "capacity"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        command = [
            *prefix,
            sys.executable,
            str(HERE / "harness" / client[0]),
            *client[1:],
            url,
            str(streams),
            str(warmup),
            str(seconds),
            str(tokens),
            str(out),
            *(["naive"] if floor == "naive" else []),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise SystemExit(f"client failed:\n{done.stderr[-3000:]}")
        r: dict[str, Any] = json.loads(out.read_text())
    events, cpu = r["events"], r["cpu_window_s"]
    return {
        "events": events,
        "cpu_s": round(cpu, 3),
        "events_per_cpu_s": round(events / cpu),
        "cpu_us_per_event": round(1e6 * cpu / events, 2),
        "cpu_share": round(cpu / seconds, 3),
        "events_per_s": round(events / seconds),
        "events_per_read": round(events / max(r["reads"], 1), 2),
        "loop_lag_p99_ms": r["health"]["loop_lag_p99_ms"] if "health" in r else None,
    }


def pair(
    url: str,
    streams: int,
    warmup: float,
    seconds: float,
    tokens: int,
    *,
    prefix: list[str],
) -> dict[str, Any]:
    """llmload's worker, then the bare gevent floors, on the same server and placement."""
    run = measure(url, streams, warmup, seconds, tokens, prefix=prefix)
    floor = measure(url, streams, warmup, seconds, tokens, prefix=prefix, floor="wait-first")
    naive = measure(url, streams, warmup, seconds, tokens, prefix=prefix, floor="naive")
    run["floor_cpu_us_per_event"] = floor["cpu_us_per_event"]
    run["floor_events_per_read"] = floor["events_per_read"]
    run["naive_floor_cpu_us_per_event"] = naive["cpu_us_per_event"]
    run["ratio_to_floor"] = round(run["cpu_us_per_event"] / floor["cpu_us_per_event"], 3)
    return run


def many_per_read(
    runs: int,
    warmup: float,
    seconds: float,
    pins: results.Pins,
) -> list[dict[str, Any]]:
    with blaster.running(1000, pins[0]) as url:
        return [pair(url, 8, warmup, seconds, 1000, prefix=pins[1]) for _ in range(runs)]


def one_per_read(
    runs: int,
    warmup: float,
    seconds: float,
    pins: results.Pins,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Runs at 1,000 streams, then at 500 (half load), on one simulator."""
    with start_sim(["--ttft-ms", "0", "--step-ms", "20", "--realtime"]) as sim:
        if pins[0]:
            subprocess.run([*pins[0], str(sim.pid)], check=True, capture_output=True)
        loaded = [pair(sim.url, 1000, warmup, seconds, 128, prefix=pins[1]) for _ in range(runs)]
        half = [pair(sim.url, 500, warmup, seconds, 128, prefix=pins[1]) for _ in range(runs)]
        return loaded, half


def summarize(name: str, runs: list[dict[str, Any]], split: dict[str, Any]) -> dict[str, Any]:
    rate = median([r["events_per_cpu_s"] for r in runs])
    goal = GOALS[name]
    return {
        "regime": name,
        "median_events_per_cpu_s": rate,
        "goal": goal,
        "meets_goal": None if goal is None else rate is not None and rate >= goal,
        "median_events_per_s": median([r["events_per_s"] for r in runs]),
        "median_cpu_share": median([r["cpu_share"] for r in runs]),
        "median_events_per_read": median([r["events_per_read"] for r in runs]),
        "median_floor_cpu_us_per_event": median([r["floor_cpu_us_per_event"] for r in runs]),
        "median_naive_floor_cpu_us_per_event": median([r["naive_floor_cpu_us_per_event"] for r in runs]),
        "median_ratio_to_floor": median([r["ratio_to_floor"] for r in runs]),
        "cost_split_us_per_event": split,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one short window per regime (CI)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pins = results.cpu_pinning()
    runs, warmup, seconds = (1, 1.5, 2.0) if args.smoke else (args.repeats, 3.0, 10.0)
    split_many, split_one = costs.split(per_read="many"), costs.split(per_read="one")
    loaded, half = one_per_read(runs, warmup, seconds, pins)
    regimes = [
        summarize("many_per_read", many_per_read(runs, warmup, seconds, pins), split_many),
        summarize("one_per_read", loaded, split_one),
        summarize("one_per_read_half_load", half, split_one),
    ]
    for r in regimes:
        print(
            f"{r['regime']:<22} {r['median_events_per_cpu_s']:>10,.0f} events per CPU-second "
            f"(goal {r['goal'] or '-'}; {r['median_events_per_read']} events per read; "
            f"{r['median_ratio_to_floor']}x the gevent floor) split {r['cost_split_us_per_event']}",
            flush=True,
        )
    doc = {
        **results.header("capacity", "capacity.py", args.smoke),
        "pinned_cpus": pins[2],
        "warmup_s": warmup,
        "window_s": seconds,
        "repeats": runs,
        "regimes": regimes,
    }
    results.write(results.default_out("capacity", args.smoke, args.out), doc)


if __name__ == "__main__":
    main()
