"""Timing error against ground truth, llmload beside its peers, following vLLM's overhead study.

    .venv/bin/python bench/accuracy.py [--repeats 5] [--no-lockstep] [--smoke] [--out PATH]
    .venv/bin/python bench/accuracy.py --diagnose   # llmload with and without recording

The simulator (``--ttft-ms 50 --step-ms S --emit-timestamps --realtime``, 100 tokens per
request, ``ignore_eos``) runs pinned to CPU 0; each client runs in its own process pinned to
CPU 1, one after the other on the same simulator, interleaved within every repeat:

- ``llmload``: its worker (``harness/llmload_client.py``: session, client, lean transport,
  full recording);
- ``vllm-style``: ``vllm bench serve``'s client, ported (``harness/vllm_style.py``);
- ``locust-lines``: Locust's stock ``FastHttpUser`` with ``iter_lines`` (``harness/locust_lines.py``).

Levels: 1, 10 and 100 streams at a 10 ms step (100 events/s each), 500 at a 50 ms step (10k
events/s in all), closed loop, streams started staggered over one request's duration; then
100 and 500 streams again in lockstep (all at once, as in vLLM's study), and the study's own
500-stream level (10 ms step, 50k events/s) for the vLLM-style client, to check it against
docs/pitfalls.md. Clients run at ``nice -10`` where permitted (all three alike) so neighbours on a
shared machine take less of their CPU. Added TTFT error and ITL error come from
``harness/truth.py``; the tables report medians over the repeats, and the claims as ratios.

``--smoke`` (CI): 10 streams, short windows, one repeat, nothing written unless ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import render, results
from harness.stats import median
from harness.truth import analyze

from llmload.sim.process import SimProcess, start_sim

HERE = Path(__file__).resolve().parent
CLIENTS = {
    "llmload": [str(HERE / "harness" / "llmload_proc.py"), "accuracy"],
    "vllm-style": [str(HERE / "harness" / "vllm_style.py")],
    "locust-lines": [str(HERE / "harness" / "locust_lines.py")],
    "llmload-unrecorded": [str(HERE / "harness" / "llmload_proc.py"), "accuracy-unrecorded"],
}
PEERS = ["llmload", "vllm-style", "locust-lines"]
TTFT_MS, TOKENS = 50.0, 100
Level = tuple[int, int, float, float, float]  # streams, step ms, stagger s, warm-up s, measured s
# Steady state: stream i starts at i/N of one request's duration (50 ms + 99 steps), the spawn
# rate a Locust user sets, so the closed loop is spread from the start. Warm-up covers the
# stagger and every stream's first request; the window holds several request cycles, and at
# one stream 20 s, so that its ITL p99 is read from 2,000 gaps rather than 600.
STEADY: list[Level] = [
    (1, 10, 1.0, 2.2, 20.0),
    (10, 10, 1.0, 2.2, 6.0),
    (100, 10, 1.0, 2.2, 6.0),
    (500, 50, 5.0, 10.5, 15.0),
]
# vLLM's study: every stream starts at once (its --request-rate inf), fixed lengths, so the
# streams finish and restart together for ever: bursts of N completions and N new requests.
LOCKSTEP: list[Level] = [(100, 10, 0.0, 1.2, 6.0), (500, 50, 0.0, 5.5, 15.0)]
REPRODUCE: Level = (500, 10, 0.0, 1.2, 8.0)  # the study's own 500-stream level, 50k events/s
SMOKE: list[Level] = [(10, 10, 0.5, 1.7, 1.5)]
# Clients run at nice -10 when permitted, so the neighbours on a shared machine take less of
# the client's CPU (the same for all three); the simulator runs at SCHED_FIFO (--realtime).
NICE = ["nice", "-n", "-10"] if os.geteuid() == 0 else []


def cpu_pressure_total() -> int:
    """Microseconds some task waited for a CPU, machine-wide (PSI), or 0 where not available."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return 0


def run_client(name: str, sim: SimProcess, level: Level, prefix: list[str]) -> dict[str, Any]:
    streams, _step, stagger, warmup, measure = level
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [
            *NICE,
            *prefix,
            sys.executable,
            *CLIENTS[name],
            sim.url,
            str(streams),
            str(warmup),
            str(measure),
            str(TOKENS),
            str(out),
            str(stagger),
        ]
        pressure0, t0 = cpu_pressure_total(), time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        pressure = (cpu_pressure_total() - pressure0) / 1e6 / (time.monotonic() - t0)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text())
    analysis = analyze(result, sim.requests(), TTFT_MS)
    analysis["cpu_pressure"] = round(pressure, 3)
    return analysis


def run_level(level: Level, names: list[str], repeats: int, pins: results.Pins) -> dict[str, Any]:
    streams, step, stagger, _warmup, _measure = level
    sim_args = ["--ttft-ms", str(TTFT_MS), "--step-ms", str(step), "--emit-timestamps", "--realtime"]
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    with start_sim(sim_args) as sim:
        if pins[0]:
            subprocess.run([*pins[0], str(sim.pid)], check=True, capture_output=True)
        for i in range(repeats):
            order = names if i % 2 == 0 else names[::-1]  # a drifting machine hits all alike
            for name in order:
                runs[name].append(run_client(name, sim, level, pins[1]))
                r = runs[name][-1]
                print(
                    f"  {streams:>4} x {step} ms {'lockstep' if not stagger else 'steady'}  {name:<13}"
                    f" TTFT err p50 {r['ttft_error']['p50_ms']} ms, ITL err p99 "
                    f"{r['itl_error']['p99_ms']} ms, CPU {r['cpu_share']:.0%}, "
                    f"CPU pressure {r['cpu_pressure']:.0%}",
                    flush=True,
                )
    return {
        "streams": streams,
        "step_ms": step,
        "start": "lockstep" if not stagger else "staggered",
        "stagger_s": stagger,
        "events_per_s": round(streams * 1000 / step),
        "clients": {n: {"median": medians(rs), "runs": rs} for n, rs in runs.items()},
    }


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def m(key: str, field: str) -> float | None:
        return median([r[key][field] for r in runs])

    return {
        "ttft_error_p50_ms": m("ttft_error", "p50_ms"),
        "ttft_error_mean_ms": m("ttft_error", "mean_ms"),
        "ttft_error_p99_ms": m("ttft_error", "p99_ms"),
        "ttft_error_vs_nominal_mean_ms": m("ttft_error_vs_nominal", "mean_ms"),
        "itl_error_p50_ms": m("itl_error", "p50_ms"),
        "itl_error_p99_ms": m("itl_error", "p99_ms"),
        "itl_error_max_ms": m("itl_error", "max_ms"),
        "client_itl_p99_ms": m("client_itl", "p99_ms"),
        "cpu_share": median([r["cpu_share"] for r in runs]),
        "requests": median([r["requests"] for r in runs]),
    }


def verdicts(levels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's goals, per level, from the medians: ratios are the claim."""
    out = []
    for lv in levels:
        c = lv["clients"]
        if "llmload" not in c or "vllm-style" not in c:
            continue
        ours, ref = c["llmload"]["median"], c["vllm-style"]["median"]
        ratio = None
        if ours["ttft_error_p50_ms"] is not None and ref["ttft_error_p50_ms"]:
            ratio = round(ours["ttft_error_p50_ms"] / ref["ttft_error_p50_ms"], 3)
        out.append(
            {
                "streams": lv["streams"],
                "start": lv["start"],
                "ttft_p50_le_5ms": ours["ttft_error_p50_ms"] is not None and ours["ttft_error_p50_ms"] <= 5,
                "ttft_ratio_to_vllm": ratio,
                "ttft_third_of_vllm": None if lv["streams"] < 100 else (ratio is not None and ratio <= 1 / 3),
                "itl_p99_not_worse": ours["itl_error_p99_ms"] <= ref["itl_error_p99_ms"],
                "cpu_le_50pct": ours["cpu_share"] <= 0.5,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    # Five: at one stream the clients' ITL p99 differ by less than one run's noise (0.13 to 1.4
    # ms for either), and a median of three turns on a single noisy run.
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-lockstep", action="store_true", help="skip the all-at-once levels")
    parser.add_argument("--smoke", action="store_true", help="one short level (CI)")
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="llmload with and without end-of-request recording, 100 streams",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pins = results.cpu_pinning()
    names = list(PEERS)
    if importlib.util.find_spec("aiohttp") is None:  # the ``bench`` extra is not installed
        print("aiohttp is missing (pip install -e '.[bench]'): the vLLM-style client is left out")
        names.remove("vllm-style")
    plan = [(lv, names) for lv in (SMOKE if args.smoke else STEADY)]
    if args.diagnose:
        plan = [(STEADY[2], ["llmload", "llmload-unrecorded"])]
    if not args.smoke and not args.no_lockstep and not args.diagnose:
        plan += [(lv, names) for lv in LOCKSTEP]
        plan += [(REPRODUCE, ["vllm-style"])] if "vllm-style" in names else []
    repeats = 1 if args.smoke else args.repeats
    levels = [run_level(lv, n, repeats, pins) for lv, n in plan]
    doc = {
        **results.header("accuracy", "accuracy.py", args.smoke),
        "pinned_cpus": pins[2],
        "client_nice": NICE[2] if NICE else 0,
        "ttft_ms": TTFT_MS,
        "tokens": TOKENS,
        "repeats": repeats,
        "levels": levels,
        "verdicts": verdicts(levels),
    }
    print("\n".join(render.accuracy_table(doc)))
    print("\n".join(render.verdict_table(doc)))
    name = "accuracy_recording" if args.diagnose else "accuracy"
    results.write(results.default_out(name, args.smoke, args.out), doc)


if __name__ == "__main__":
    main()
