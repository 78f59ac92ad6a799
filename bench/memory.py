"""Memory with full recording on: bytes per in-flight stream, and the RSS slope under constant load.

    .venv/bin/python bench/memory.py [--streams 1000] [--slope-s 600] [--smoke] [--out PATH]

Per stream: llmload's worker (``harness/memory_proc.py``) opens ``--streams`` streams against
the simulator (``--ttft-ms 0 --step-ms 50``, responses far longer than the measurement, so none
ends) and compares RSS, and in a second run ``tracemalloc``'s traced Python memory, before the
first stream and ``settle`` seconds after the last one's first token. Goal: <= 20 KB per stream.

Beside it, the floor any gevent client pays per stream: a bare greenlet blocked in ``recv``
(``memory_proc.py floor``). The goal is taken on RSS, the larger and more conservative number:
it also counts what the C allocators hold and tracemalloc cannot see (greenlet stack copies,
libev watchers, fragmentation).

Slope: 100 streams of 100 tokens at a 10 ms step (10k events/s, ~100 requests/s, every request
written to ``requests.jsonl`` and folded into the stage's stats), RSS once a second, a
least-squares slope over the samples after the first 20% (allocator warm-up), with its standard
error. Goal (issue 8): under 1 MB/min over 10 minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import results
from harness.stats import slope

from llmload.sim.process import start_sim

HERE = Path(__file__).resolve().parent
PROC = str(HERE / "harness" / "memory_proc.py")


def child(args: list[str], pin: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        done = subprocess.run(
            [*pin, sys.executable, PROC, *args, str(out)],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"memory_proc failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def per_stream(streams: int, settle_s: float, pins: results.Pins, trace: bool) -> dict[str, Any]:
    with start_sim(["--ttft-ms", "0", "--step-ms", "50", "--realtime"]) as sim:
        if pins[0]:
            subprocess.run([*pins[0], str(sim.pid)], check=True, capture_output=True)
        rss = child(["per-stream", sim.url, str(streams), str(settle_s), "0"], pins[1])
        traced = (
            child(["per-stream", sim.url, str(streams), str(settle_s), "1"], pins[1])
            if trace
            else {"traced_bytes_per_stream": None}
        )
    worst = max(rss["rss_bytes_per_stream"], traced["traced_bytes_per_stream"] or 0)
    gevent_floor = child(["floor", "-", str(streams), "-", "-"], pins[1])
    return {
        "streams": streams,
        "settle_s": settle_s,
        "rss_run": rss,
        "tracemalloc_run": traced,
        "gevent_floor": gevent_floor,
        "bytes_per_stream": worst,
        "goal_bytes": 20_000,
        "meets_goal": worst <= 20_000,
    }


def rss_slope(seconds: float, pins: results.Pins) -> dict[str, Any]:
    with start_sim(["--ttft-ms", "50", "--step-ms", "10", "--realtime"]) as sim:
        if pins[0]:
            subprocess.run([*pins[0], str(sim.pid)], check=True, capture_output=True)
        run = child(["slope", sim.url, "100", str(seconds), "100"], pins[1])
    samples = run["samples"]
    kept = samples[len(samples) // 5 :]
    b, se = slope([t for t, _ in kept], [r for _, r in kept])
    per_min = 60 * b / 1e6
    return {
        "seconds": seconds,
        "streams": 100,
        "records_written": run["records"],
        "rss_start_mb": round(samples[0][1] / 1e6, 2),
        "rss_end_mb": round(samples[-1][1] / 1e6, 2),
        "slope_mb_per_min": round(per_min, 4),
        "slope_stderr_mb_per_min": round(60 * se / 1e6, 4),
        "goal_mb_per_min": 1.0,
        "meets_goal": per_min + 2 * 60 * se / 1e6 < 1.0,
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--slope-s", type=float, default=600.0, help="the constant-load run (s)")
    parser.add_argument("--smoke", action="store_true", help="per-stream (RSS only), a 20 s slope (CI)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pins = results.cpu_pinning()
    settle, seconds = (1.0, 20.0) if args.smoke else (5.0, args.slope_s)
    doc = {
        **results.header("memory", "memory.py", args.smoke),
        "pinned_cpus": pins[2],
        "per_stream": per_stream(args.streams, settle, pins, trace=not args.smoke),
        "slope": rss_slope(seconds, pins),
    }
    ps, sl = doc["per_stream"], doc["slope"]
    print(
        f"per in-flight stream at {ps['streams']}: RSS {ps['rss_run']['rss_bytes_per_stream']:,} B, "
        f"traced {ps['tracemalloc_run']['traced_bytes_per_stream']} B "
        f"({ps['rss_run']['token_events_per_stream']} token events each); goal 20,000 B"
    )
    print(
        f"RSS slope over {seconds:.0f} s: {sl['slope_mb_per_min']:+.3f} ± "
        f"{sl['slope_stderr_mb_per_min']:.3f} MB/min ({sl['records_written']} requests); goal < 1 MB/min"
    )
    results.write(results.default_out("memory", args.smoke, args.out), doc)


if __name__ == "__main__":
    main()
