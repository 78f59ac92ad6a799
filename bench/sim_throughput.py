"""Events per CPU-second the simulator serves: 512 streams, one event per write.

    .venv/bin/python bench/sim_throughput.py [--streams 512] [--step-ms 20,10] [--seconds 10]
                                             [--smoke] [--out bench/results/sim_throughput.json]

The simulator runs as usual (its own process, uvloop) with a flat step: ``--step-base-ms S
--step-per-seq-ms 0 --prefill-per-token-ms 0``, so every stream gets one event per step, each in
its own write. A lean client in another process (uvloop, one ``asyncio.Protocol`` per stream,
counting bytes, no parsing) holds ``--streams`` streams open with a huge ``max_tokens``. Over a
measured window the simulator's own counters give events written and its CPU time
(``/sim/counters``: ``events_written_total``, ``cpu_ns`` = its ``process_time``), so the number
is the simulator's cost alone, whatever else runs on the machine. Step lateness and the client's
CPU are reported beside it: a late step means the number was taken on a starved machine.

``--smoke`` (CI) measures one 2-second window at 20 ms steps and writes nothing unless ``--out``
is given; it finishes in well under 20 s. The simulator runs with ``--realtime`` (SCHED_FIFO when
permitted, see ``docs/sim.md``) unless ``--normal-priority``: on a shared machine the neighbours
would otherwise decide whether it kept up. The CPU cost per event does not depend on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from llmload.sim.process import SimProcess, start_sim

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "sim_throughput.json"


# -- the client (child process) ---------------------------------------------------------------


class _Stream(asyncio.Protocol):
    def __init__(self, request: bytes, counts: list[int]) -> None:
        self._request = request
        self._counts = counts

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self._request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self._counts[0] += len(data)
        self._counts[1] += 1


async def _client(port: int, streams: int, seconds: float) -> dict[str, float]:
    body = json.dumps(
        {
            "model": "sim",
            "messages": [{"role": "user", "content": "benchmark " * 16}],
            "max_tokens": 1_000_000,
            "ignore_eos": True,
            "stream": True,
        }
    ).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%b" % (len(body), body)
    )
    loop = asyncio.get_running_loop()
    counts = [0, 0]  # bytes, reads
    transports = []
    for _ in range(streams):
        transport, _ = await loop.create_connection(lambda: _Stream(request, counts), "127.0.0.1", port)
        transports.append(transport)
    await asyncio.sleep(seconds)
    for transport in transports:
        transport.close()
    return {"bytes": counts[0], "reads": counts[1], "cpu_s": time.process_time()}


def run_client(port: int, streams: int, seconds: float) -> None:
    try:
        import uvloop

        result = uvloop.run(_client(port, streams, seconds))
    except ImportError:
        result = asyncio.run(_client(port, streams, seconds))
    print(json.dumps(result), flush=True)


# -- the measurement ---------------------------------------------------------------------------


def _wait_running(sim: SimProcess, streams: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while sim.counters()["running"] < streams:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {sim.counters()['running']} of {streams} streams started")
        time.sleep(0.1)


def measure(streams: int, step_ms: float, seconds: float, warmup_s: float, realtime: bool) -> dict[str, Any]:
    args = [
        *(["--realtime"] if realtime else []),
        f"--step-base-ms={step_ms}",
        "--step-per-seq-ms=0",
        "--prefill-per-token-ms=0",
        f"--max-running={streams * 2}",
        "--kv-budget-tokens=1000000000",
    ]
    with start_sim(args) as sim:
        client = subprocess.Popen(
            [sys.executable, __file__, "--client", str(sim.port), str(streams), str(seconds + warmup_s + 30)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_running(sim, streams, 30)
            time.sleep(warmup_s)
            before = sim.counters()
            time.sleep(seconds)
            after = sim.counters()
            stats = sim.stats(since_ns=before["now_ns"])
        finally:
            client.terminate()
            client.communicate(timeout=10)
    events = after["events_written_total"] - before["events_written_total"]
    cpu_s = (after["cpu_ns"] - before["cpu_ns"]) / 1e9
    wall_s = (after["now_ns"] - before["now_ns"]) / 1e9
    return {
        "streams": streams,
        "step_ms": step_ms,
        "window_s": round(wall_s, 3),
        "events": events,
        "events_per_s": round(events / wall_s),
        "offered_events_per_s": round(streams * 1000 / step_ms),
        "sim_cpu_s": round(cpu_s, 3),
        "sim_cpu_share": round(cpu_s / wall_s, 3),
        "events_per_cpu_s": round(events / cpu_s),
        "cpu_us_per_event": round(cpu_s / events * 1e6, 2),
        "step_lateness_ns": stats["lateness"],
        "kept_up": stats["lateness"]["p99_ns"] < step_ms * 1e6,
        "realtime": stats["realtime"],
    }


def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=512)
    parser.add_argument("--step-ms", default="20,10", help="comma-separated step times to measure")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window per step time")
    parser.add_argument("--smoke", action="store_true", help="one 2 s window at 20 ms (CI)")
    parser.add_argument("--out", type=Path, help=f"result JSON (default {DEFAULT_OUT} unless --smoke)")
    parser.add_argument(
        "--normal-priority",
        action="store_true",
        help="do not pass --realtime to the simulator (lateness then includes the neighbours)",
    )
    parser.add_argument("--client", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        run_client(int(args.client[0]), int(args.client[1]), float(args.client[2]))
        return
    steps = [20.0] if args.smoke else [float(s) for s in args.step_ms.split(",")]
    seconds, warmup_s = (2.0, 0.5) if args.smoke else (args.seconds, 1.0)
    realtime = not args.normal_priority
    runs = [measure(args.streams, step, seconds, warmup_s, realtime) for step in steps]
    result = {
        "benchmark": "sim_throughput",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "git_revision": _git_revision(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "smoke": args.smoke,
        "load_average_1m": round(os.getloadavg()[0], 2),  # the machine is shared: how busy it was
        "runs": runs,
    }
    text = json.dumps(result, indent=2)
    print(text)
    out = args.out if args.out is not None else (None if args.smoke else DEFAULT_OUT)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")


if __name__ == "__main__":
    main()
