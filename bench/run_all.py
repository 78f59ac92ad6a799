"""Run every benchmark end to end, then print the side-by-side table and regenerate the docs.

    .venv/bin/python bench/run_all.py            # full runs (about 65 minutes), results committed
    .venv/bin/python bench/run_all.py --smoke    # CI: every script's smoke mode, nothing kept

Full runs write ``bench/results/NAME.json`` and then ``docs/performance.md`` (``report.py``).
Smoke runs write their JSON to a temporary folder, print the same tables from it, and leave the
committed results and docs alone. ``--skip a,b`` leaves benchmarks out (by script name).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import render

HERE = Path(__file__).resolve().parent
TUNED_FROM = "2ec3641e56b77615625db7c1c7327bb4984c3464"  # src/ before the hot-path tuning (4bab018)
# (script, extra args, how it takes its output path; None: it prints only)
BENCHMARKS: list[tuple[str, list[str], str | None]] = [
    ("core_parse", [], None),
    ("transport_parse", [], None),
    ("sim_throughput", [], "--out"),
    ("hot_path_ab", ["--before", TUNED_FROM], "--out"),
    ("capacity", [], "--out"),
    ("accuracy", [], "--out"),
    ("memory", [], "--out"),
    ("master_scale", [], "--out"),
    ("fleet_netns", [], "--out"),
    ("exporter_overhead", [], "--out"),
    ("client_bound", [], "--json"),
    ("otlp_cost", [], "--out"),
    ("api_parse", [], "--out"),
]
TABLES = {
    "hot_path_ab": render.tuning_table,
    "capacity": render.capacity_table,
    "accuracy": render.accuracy_table,
    "memory": render.memory_table,
    "master_scale": render.master_table,
    "fleet_netns": render.fleet_table,
    "client_bound": render.client_bound_table,
}


def run(name: str, extra: list[str], out_flag: str | None, smoke: bool, folder: Path | None) -> float:
    command = [sys.executable, str(HERE / f"{name}.py"), *(["--smoke"] if smoke else []), *extra]
    if out_flag is not None and folder is not None:
        command += [out_flag, str(folder / f"{name}.json")]
    print(f"\n=== {name}: {' '.join(command[1:])}", flush=True)
    start = time.monotonic()
    subprocess.run(command, check=True, cwd=HERE.parent)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="every benchmark's smoke mode (CI)")
    parser.add_argument("--skip", default="", help="comma-separated script names to leave out")
    args = parser.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    with tempfile.TemporaryDirectory() as tmp:
        # Full runs of our own benchmarks write where report.py reads; the owners' scripts pick
        # their own default paths.
        folder = Path(tmp) if args.smoke else None
        took = {
            name: run(name, extra, flag, args.smoke, folder)
            for name, extra, flag in BENCHMARKS
            if name not in skip
        }
        source = Path(tmp) if args.smoke else HERE / "results"
        for name, table in TABLES.items():
            path = source / f"{name}.json"
            if name in took and path.exists():
                print(f"\n## {name}\n" + "\n".join(table(json.loads(path.read_text()))))
        if "accuracy" in took and (source / "accuracy.json").exists():
            print("\n" + "\n".join(render.verdict_table(json.loads((source / "accuracy.json").read_text()))))
    print("\n" + ", ".join(f"{n} {s:.0f} s" for n, s in took.items()))
    if not args.smoke:
        subprocess.run([sys.executable, str(HERE / "report.py")], check=True, cwd=HERE.parent)


if __name__ == "__main__":
    main()
