"""capacity.py on two revisions of ``src/``, side by side in one run.

    .venv/bin/python bench/capacity_ab.py --before REV [--after REV] [--rounds 2] [--out PATH]

Each revision's ``src/`` is exported as ``hot_path_ab.py`` exports it, and ``capacity.py
--repeats 1`` runs once per round with ``PYTHONPATH`` pointing at it (its worker, its
simulator), alternately: before first in even rounds, after first in odd ones, since the first
of a pair ran faster here by as much as a change. Each regime's row is the median of the
rounds: events per CPU-second and the ratio to the bare gevent floor measured beside it.
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
from harness.stats import median

HERE = Path(__file__).resolve().parent


def once(src: Path, out: Path) -> list[dict[str, Any]]:
    """One ``capacity.py --repeats 1`` on ``src``: its regimes."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, str(HERE / "capacity.py"), "--repeats", "1", "--out", str(out)]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    regimes: list[dict[str, Any]] = json.loads(out.read_text())["regimes"]
    return regimes


def main() -> None:
    args = ab.arguments(__doc__, rounds=2)
    seen: dict[str, dict[str, list[dict[str, Any]]]] = {"before": {}, "after": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for i, name, src in ab.rounds(args, Path(tmp)):
            for regime in once(src, Path(tmp) / f"{name}-{i}.json"):
                seen[name].setdefault(regime["regime"], []).append(regime)
                print(f"round {i} {name:<6} {regime['regime']:<22} "
                      f"{regime['median_events_per_cpu_s']:>9,} events/CPU-s, "
                      f"x{regime['median_ratio_to_floor']} the floor", flush=True)  # fmt: skip
    rows = []
    for regime in seen["before"]:
        row: dict[str, Any] = {"regime": regime}
        for name in ("before", "after"):
            rounds = seen[name][regime]
            row[name] = {
                "events_per_cpu_s": median([r["median_events_per_cpu_s"] for r in rounds]),
                "ratio_to_floor": median([r["median_ratio_to_floor"] for r in rounds]),
                "rounds_events_per_cpu_s": [r["median_events_per_cpu_s"] for r in rounds],
            }
        row["ratio"] = round(row["after"]["events_per_cpu_s"] / row["before"]["events_per_cpu_s"], 3)
        rows.append(row)
        before, after = row["before"]["events_per_cpu_s"], row["after"]["events_per_cpu_s"]
        print(f"{regime:<22} {before:>9,} -> {after:>9,} events/CPU-s (x{row['ratio']})")
    ab.write("capacity_ab", args, rows=rows)


if __name__ == "__main__":
    main()
