"""Full garbage collections in a run's Locust process, and how long each stopped it, on two
revisions of ``src/`` side by side in one run.

    .venv/bin/python bench/gc_pause.py --before REV [--after REV] [--rounds 2] [--out PATH]

Each round runs one short sweep per revision (``llmload sweep --sim vllm --levels 1,32
--stage-s 5 --max-tokens 64``, alternating which goes first), with ``harness/gc_probe/`` on
``PYTHONPATH``: its ``sitecustomize`` times every collection of the oldest generation in each
process through ``gc.callbacks`` and writes them down. A collection stops the whole process, so
every stream's next read is stamped that much late; each round lists, per revision, the full
collections of the Locust process with their pause in ms and where they fell: before the first
request, in the first warm-up (streams in flight), in a measured window, between two, or after
the last (where the summary is written).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import ab

HERE = Path(__file__).resolve().parent
SWEEP = ["--sim", "vllm", "--levels", "1,32", "--stage-s", "5", "--max-tokens", "64", "--processes", "0"]


def one_sweep(src: Path, out: Path) -> list[dict[str, Any]]:
    """The full collections of one sweep's processes: ``{"pid", "t", "ms"}`` each, in order."""
    log = out / "gc.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE / "harness" / "gc_probe"), str(src)]),
        "GC_PROBE_LOG": str(log),
    }
    command = [sys.executable, "-m", "llmload.cli", "sweep", *SWEEP, "--results-dir", str(out)]
    subprocess.run(command, env=env, check=True, capture_output=True, cwd=out)
    return [json.loads(line) for line in log.read_text().splitlines()]


def of_locust(events: list[dict[str, Any]], run_dir: Path) -> list[dict[str, Any]]:
    """The pauses of the Locust process (the one that runs the users), each placed against the
    run's measured windows (the same clock: ``perf_counter_ns``)."""
    stages = json.loads((run_dir / "summary.json").read_bytes())["stages"]
    windows = [s["window_ns"] for s in stages if s["window_ns"] and None not in s["window_ns"]]
    first, last = min(t0 for t0, _ in windows), max(t1 for _, t1 in windows)
    with (run_dir / "requests.jsonl").open("rb") as lines:
        began = min(json.loads(line)["began_ns"] for line in lines)
    out = []
    for e in events:
        if "locust" not in str(e["program"]):
            continue
        t = int(e["start_ns"])
        where = (
            "in a measured window" if any(t0 <= t <= t1 for t0, t1 in windows)
            else "before the first request" if t < began
            else "in the first warm-up" if t < first
            else "after the last window" if t > last
            else "between windows"
        )  # fmt: skip
        out.append({"ms": round(float(e["ms"]), 1), "when": where})
    return out


def main() -> None:
    args = ab.arguments(__doc__, rounds=2)
    seen: dict[str, list[list[dict[str, Any]]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, name, src in ab.rounds(args, Path(tmp)):
            out = Path(tmp) / f"{name}-{i}"
            out.mkdir()
            pauses = of_locust(one_sweep(src, out), next(out.glob("*/summary.json")).parent)
            seen[name].append(pauses)
            shown = ", ".join(f"{p['ms']} ms {p['when']}" for p in pauses)
            print(f"round {i} {name:<6} full collections: {shown}", flush=True)
    ab.write("gc_pause", args, sweep=SWEEP, full_collections_ms=seen)


if __name__ == "__main__":
    main()
