"""Result files: every benchmark writes one JSON document with the same provenance header."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"


def git_revision() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def header(benchmark: str, script: str, smoke: bool) -> dict[str, Any]:
    """What makes a number reproducible: the command, the code, the machine, the moment."""
    return {
        "benchmark": benchmark,
        "command": " ".join(["python", f"bench/{script}", *sys.argv[1:]]),
        "git_revision": git_revision(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "smoke": smoke,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


Pins = tuple[list[str], list[str], list[str]]


def cpu_pinning() -> Pins:
    """``taskset`` prefixes for the server (all its threads, by pid) and for the client, and the
    CPUs used: the server on the first CPU, the client on the last, when there are two."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return [], [], [str(c) for c in cpus]
    return (
        ["taskset", "-a", "-cp", str(cpus[0])],
        ["taskset", "-c", str(cpus[-1])],
        [str(cpus[0]), str(cpus[-1])],
    )


def default_out(name: str, smoke: bool, out: Path | None) -> Path | None:
    """Full runs write ``bench/results/NAME.json``; smoke runs write only where told to, so CI
    never overwrites the committed numbers."""
    if out is not None:
        return out
    return None if smoke else RESULTS / f"{name}.json"


def write(path: Path | None, document: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {path}", flush=True)
