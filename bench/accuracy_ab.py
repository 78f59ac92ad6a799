"""The timing error of llmload's worker on two revisions, alternating on one simulator.

    .venv/bin/python bench/accuracy_ab.py --before REV [--rounds 3] [LEVEL ...]

``accuracy.py`` compares llmload with its peers on the tree as it is; this compares llmload
with itself: each revision's ``src/`` (``git archive``, as ``hot_path_ab.py`` does) runs
``accuracy.py``'s llmload client in turn, round after round, on the same simulator, so a change
to the hot path is judged against the machine's noise of the same minutes. LEVEL is one of
``500-lockstep`` (the burst case: every stream finishes and restarts together), ``500-steady``
and ``1-steady`` (default: all three). Prints one line per run; writes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import accuracy
from harness import results
from harness.ab import export

from llmload.sim.process import start_sim

LEVELS: dict[str, accuracy.Level] = {
    "500-lockstep": accuracy.LOCKSTEP[1],
    "500-steady": accuracy.STEADY[3],
    "1-steady": (1, 10, 1.0, 2.2, 10.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("levels", nargs="*", choices=list(LEVELS), default=list(LEVELS))
    args = parser.parse_args()
    pins = results.cpu_pinning()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": export(args.before, Path(tmp) / "before"), "after": results.REPO / "src"}
        for name in args.levels:
            level = LEVELS[name]
            sim_args = [
                "--ttft-ms",
                str(accuracy.TTFT_MS),
                "--step-ms",
                str(level[1]),
                "--emit-timestamps",
                "--realtime",
            ]
            with start_sim(sim_args) as sim:
                if pins[0]:
                    subprocess.run([*pins[0], str(sim.pid)], check=True, capture_output=True)
                for i in range(args.rounds):
                    order = list(trees) if i % 2 == 0 else list(trees)[::-1]
                    for tree in order:
                        prefix = ["env", f"PYTHONPATH={trees[tree]}", *pins[1]]
                        r = accuracy.run_client("llmload", sim, level, prefix)
                        print(
                            f"{name} {tree:<6} TTFT error p50 {r['ttft_error']['p50_ms']} ms, p99 "
                            f"{r['ttft_error']['p99_ms']} ms; ITL error p99 {r['itl_error']['p99_ms']} ms; "
                            f"CPU {r['cpu_share']:.0%}",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
