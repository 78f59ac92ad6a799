"""Calibrate ``client-bound``: a client's timing error under CPU contention, against the flag.

    .venv/bin/python bench/client_bound.py [--streams 32] [--levels rt,0,1n,1,2,4,8,q10,l1536]
                                           [--seconds 20] [--smoke] [--json PATH]

The simulator (fixed timing: first token 50 ms after arrival, then one token every 20 ms;
``--realtime``) runs pinned to CPU 0, so contention cannot move the truth. One llmload process
(a local run: the same session and health monitor as a worker) runs a fixed, modest number of
streams pinned to the last CPU; each level adds CPU contention, never streams (``Contention``):
N busy-loop burners pinned to the client's CPU (``Nn``: the same at nice 19), a cgroup limit
of P% of one core (``qP``), or a stall (``sN``): a SCHED_FIFO spinner on the client's CPU that
holds it N ms out of every 2N ms on average (random gaps), so the client cannot run at all
half the time. Level ``rt`` is the clean baseline on a shared machine: no burners
and the client itself at SCHED_FIFO priority 1 (``chrt``), so nobody else delays it either.
Levels ``lN`` overload by load instead: N streams and no contention (1,024 streams at this step
offer ~51k events/s, about one worker's capacity: bench/capacity.py).
Needs root for ``rt``, ``qP`` and ``sN``; ``--smoke`` runs ``rt`` and ``s20``, 12 s each. The
smoke's contended level is a stall, not burners, because how late burners make a client depends
on the kernel's scheduler: 4 burners at equal nice gave an error p99 of 15-30 ms on one 2-core
VM and 4.8 ms on another (the waking client preempts a burner at once there), while a stall
delays a token arriving in it by up to N ms on any kernel: p99 about 0.98 N. Rows go to
``bench/results/client_bound.json`` (``--json``), from which docs/performance.md shows them.

Timing error of event ``i`` of a request: ``(event_ns[i] - sent_ns) - (sim TTFT + i * step)``,
how much later than the simulator wrote it the client stamped it, measured from the client's
own send stamp: exactly the error that enters TTFT, ITL and E2E. The simulator's TTFT is the
median from its own log; its step lateness p99 is reported beside (it is the truth's own error).

For each level it prints the error p50/p99, the client's loop-lag p99 and CPU, whether the stage
was flagged ``client_bound``, and the rule's verdict (docs/metrics.md, client health): with the bound
taken as ``HealthLimits.loop_lag_p99_ms``, the flag must be raised when the error p99 is at least
twice the bound and must not be raised when it is at most half of it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from harness import results

from llmload.core.health import HealthLimits
from llmload.metrics.histogram import nearest_rank
from llmload.sim.process import SimProcess, start_sim

REPO = Path(__file__).resolve().parents[1]
TTFT_MS, STEP_MS, TOKENS = 50, 20, 32


def _pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[nearest_rank(q, len(ordered)) - 1] / 1e6 if ordered else float("nan")


def timing_errors(records: list[dict[str, Any]], ttft_ns: int, step_ns: int) -> list[int]:
    """Per event, of the successful measured requests (of all of them if the warm-up never
    ended: then the client was too slow to finish one round of requests)."""
    ok = [r for r in records if r["outcome"] == "ok"]
    measured = [r for r in ok if r["phase"] == "measure"] or ok
    return [t - r["sent_ns"] - (ttft_ns + i * step_ns) for r in measured for i, t in enumerate(r["event_ns"])]


class Contention:
    """One level: ``rt`` (none, the client at SCHED_FIFO), ``N`` (N burners pinned to the
    client's CPU), ``Nn`` (the same at nice 19: light), ``qP`` (the client in a cgroup limited
    to P% of one core, v1 or v2 cgroupfs), ``sN`` (a SCHED_FIFO spinner holding the client's
    CPU N ms of every 2N), ``lN`` (no contention: N streams, overload by load)."""

    def __init__(self, level: str, cpu: int) -> None:
        self.level, self.cpu = level, cpu
        self.quota = int(level[1:]) if level.startswith("q") else None
        self.load = int(level[1:]) if level.startswith("l") else None
        self.stall_ms = int(level[1:]) if level.startswith("s") else None
        self.realtime = level == "rt"
        other = self.realtime or self.quota or self.load or self.stall_ms
        self.burners = 0 if other else int(level.rstrip("n"))
        nice = ["nice", "-n", "19"] if level.endswith("n") else []
        self._procs = [
            subprocess.Popen([*nice, "taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"])
            for _ in range(self.burners)
        ]
        if self.stall_ms:
            # Priority 2 is above the clean baseline's 1, and half the time is well inside the
            # kernel's real-time throttle (95%), so the machine stays usable. The gaps are random
            # because the simulator's tokens come on a fixed 20 ms grid: a fixed 2N ms cycle
            # locks onto it and lands the stalls between tokens (s20 read an error p99 of 9.4 ms).
            n = self.stall_ms / 1000
            spin = (
                "import random, time\n"
                "while True:\n"
                f"    end = time.monotonic() + {n}\n"
                "    while time.monotonic() < end: pass\n"
                f"    time.sleep(random.uniform({n / 2}, {n * 1.5}))\n"
            )
            self._procs.append(
                subprocess.Popen(["chrt", "-f", "2", "taskset", "-c", str(cpu), sys.executable, "-c", spin])
            )
        self._cgroup = self._make_cgroup() if self.quota else None

    def _make_cgroup(self) -> Path:
        v1 = Path("/sys/fs/cgroup/cpu")
        path = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / f"llmload-bench-{os.getpid()}"
        path.mkdir()
        period = 100_000
        if (path / "cpu.max").exists():
            (path / "cpu.max").write_text(f"{period * (self.quota or 0) // 100} {period}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(period))
            (path / "cpu.cfs_quota_us").write_text(str(period * (self.quota or 0) // 100))
        return path

    def command(self, argv: list[str]) -> list[str]:
        pin = ["taskset", "-c", str(self.cpu), *argv]
        if self.realtime:
            return ["chrt", "-f", "1", *pin]
        if self._cgroup is not None:
            return ["sh", "-c", f'echo $$ > {self._cgroup}/cgroup.procs && exec "$@"', "sh", *pin]
        return pin

    def close(self) -> None:
        for p in self._procs:
            p.kill()
            p.wait()
        if self._cgroup is not None:
            self._cgroup.rmdir()


def run_level(
    sim: SimProcess, level: str, *, streams: int, seconds: int, cpu: int, tmp: Path
) -> dict[str, Any]:
    run_id = f"level-{level}"
    contention = Contention(level, cpu)
    streams = contention.load or streams
    try:
        time.sleep(0.5)
        since = time.perf_counter_ns()
        done = subprocess.run(
            contention.command(
                [
                    sys.executable,
                    "-m",
                    "locust",
                    "-f",
                    str(REPO / "locustfiles/chat.py"),
                    "--headless",
                    "-u",
                    str(streams),
                    "-r",
                    str(streams),
                    "-t",
                    f"{seconds}s",
                    "--host",
                    sim.url,
                    "--max-tokens",
                    str(TOKENS),
                    "--ignore-eos",
                    "--results-dir",
                    str(tmp),
                    "--run-id",
                    run_id,
                    "--only-summary",
                    "--loglevel",
                    "WARNING",
                ]
            ),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=seconds + 120,
            check=False,
        )
    finally:
        contention.close()
    summary_path = tmp / run_id / "summary.json"
    if not summary_path.exists():
        raise RuntimeError(
            f"the client failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    summary = orjson.loads(summary_path.read_bytes())
    with (tmp / run_id / "requests.jsonl").open("rb") as f:
        records = [orjson.loads(line) for line in f if line.strip()]
    logged = [e for e in sim.requests() if e["arrival_ns"] >= since and e["first_token_ns"]]
    sim_ttft = int(statistics.median(e["first_token_ns"] - e["arrival_ns"] for e in logged))
    errors = timing_errors(records, sim_ttft, STEP_MS * 1_000_000)
    (stage,) = summary["stages"]
    (health,) = stage["client_health"].values()
    return {
        "level": level,
        "streams": streams,
        "burners": contention.burners,
        "client_realtime": contention.realtime,
        "quota_percent": contention.quota,
        "stall_ms": contention.stall_ms,
        "measured": stage["duration_s"] > 0,
        "events": len(errors),
        "error_p50_ms": round(_pct(errors, 0.5), 3),
        "error_p99_ms": round(_pct(errors, 0.99), 3),
        "itl_p99_ms": (stage["itl_ms"] or {}).get("p99"),
        "sim_ttft_ms": round(sim_ttft / 1e6, 3),
        "sim_lateness_p99_ms": round(sim.stats()["lateness"]["p99_ns"] / 1e6, 3),
        "loop_lag_p99_ms": health["loop_lag_p99_ms"],
        "loop_lag_max_ms": health["loop_lag_max_ms"],
        "cpu_percent": health["cpu_percent"],
        "client_bound": stage["client_bound"],
    }


def verdict(row: dict[str, Any], limits: HealthLimits) -> str:
    bound = limits.loop_lag_p99_ms
    if row["error_p99_ms"] >= 2 * bound:
        return "ok: flagged" if row["client_bound"] else "WRONG: error >= 2x bound, not flagged"
    if row["error_p99_ms"] <= bound / 2:
        return "WRONG: error <= bound/2, flagged" if row["client_bound"] else "ok: not flagged"
    return "either (between bound/2 and 2x bound)"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", type=int, default=32)
    p.add_argument(
        "--levels",
        default="rt,0,1n,2n,1,2,4,8,q50,q20,q10,s5,s20,l256,l1024,l1536",
        help="rt, N burners, Nn burners at nice 19, qP: a P%% cgroup CPU limit, sN: an N ms stall "
        "every 2N ms, lN: N streams",
    )
    p.add_argument("--seconds", type=int, default=20, help="run time of each level")
    p.add_argument("--smoke", action="store_true", help="two levels (rt and s20), 12 s")
    p.add_argument(
        "--json",
        type=Path,
        help="write the results here (default: bench/results/client_bound.json; --smoke: nowhere)",
    )
    args = p.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("needs two CPUs: one for the simulator, one for the client", file=sys.stderr)
        return 2
    levels = ["rt", "s20"] if args.smoke else [x.strip() for x in args.levels.split(",")]
    seconds = 12 if args.smoke else args.seconds
    limits, rows = HealthLimits(), []
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_sim(["--ttft-ms", str(TTFT_MS), "--step-ms", str(STEP_MS), "--realtime"]) as sim,
    ):
        os.sched_setaffinity(sim.pid, {cpus[0]})
        print(
            f"limits: loop lag p99 {limits.loop_lag_p99_ms} ms, CPU {limits.cpu_fraction:.0%}; "
            f"{args.streams} streams x {1000 // STEP_MS} tok/s on CPU {cpus[-1]}, simulator "
            f"on CPU {cpus[0]}"
        )
        print("level  error p50/p99 ms  ITL p99  loop lag p99/max  CPU%  flagged  verdict")
        for n in levels:
            row = run_level(sim, n, streams=args.streams, seconds=seconds, cpu=cpus[-1], tmp=Path(tmp))
            row["verdict"] = verdict(row, limits)
            rows.append(row)
            print(
                f"{n:>5}  {row['error_p50_ms']:6.2f} / {row['error_p99_ms']:7.2f}  "
                f"{row['itl_p99_ms']!s:>7}  {row['loop_lag_p99_ms']!s:>7} / "
                f"{row['loop_lag_max_ms']!s:>7}  {row['cpu_percent']:4}  "
                f"{row['client_bound']!s:7}  {row['verdict']}",
                flush=True,
            )
    out = results.default_out("client_bound", args.smoke, args.json)
    if out is not None:
        doc = {
            **results.header("client_bound", "client_bound.py", args.smoke),
            "streams": args.streams,
            "seconds": seconds,
            "ttft_ms": TTFT_MS,
            "step_ms": STEP_MS,
            "tokens": TOKENS,
            "loop_lag_p99_limit_ms": limits.loop_lag_p99_ms,
            "cpu_limit": limits.cpu_fraction,
            "rows": rows,
        }
        results.write(out, doc)
    return 1 if any(r["verdict"].startswith("WRONG") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
