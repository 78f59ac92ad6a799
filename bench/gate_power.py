"""The gate's false-alarm rate and power on regressions of known size (docs/history.md).

    .venv/bin/python bench/gate_power.py            # 21 + 10 + 10 sweeps of 5 repeats; ~20 minutes
    .venv/bin/python bench/gate_power.py --smoke    # CI: 3 + 1 + 1 sweeps, nothing kept

Every sweep is a process of its own with a simulator of its own (``llmload sweep --sim vllm``),
one level, five repeats. The engine is the vllm profile as it is (``base``), the same profile
5% slower in tok/s (``--slowdown 1/0.95``), and the same profile with a slower prefill
(``--prefill-slowdown``, which moves TTFT's tail; the measured change is reported, since a
slower prefill also slows the batch it joins). A trial is one sweep judged against another by
``llmload.results.gate.judge_run``, at 3 and at 5 repeats (the first N of each sweep):

- false alarms: each base sweep judged against the one before it (20 pairs from 21 sweeps;
  neighbouring pairs share a sweep), goal: 0 called a regression, at most 1 "insufficient";
- power: each slower sweep against a base sweep of its own (goal: at least 90% found at 5
  repeats), by the built-in policy and by the regressed metric's cell alone.

Writes bench/results/gate_power.json.
"""

from __future__ import annotations

import argparse
import itertools
import math
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import orjson

from llmload.export.rundata import read_summary
from llmload.results.gate import CellOutcome, GateCode, judge_run
from llmload.results.gate_policy import DEFAULT_POLICY
from llmload.results.runrecord import RunRecord, record_of

REPO = Path(__file__).resolve().parents[1]
# Short answers at 32 users: about 190 requests a second, so a 3 s repeat carries the 459
# requests a p99 needs (docs/history.md), and a sweep of five repeats takes about 27 s.
LEVEL, REPEATS, STAGE_S = "32", 5, 3.0
PREFILL_SLOWDOWN = 1.5
CONDITIONS = {
    "base": [],
    "tok5": [f"--slowdown={1 / 0.95}"],
    "ttft": [f"--prefill-slowdown={PREFILL_SLOWDOWN}"],
}


def sweep(name: str, sim_args: list[str], folder: Path, stage_s: float) -> RunRecord:
    command = [
        sys.executable, "-m", "llmload.cli", "sweep", "--sim", "vllm",
        *(f"--sim-arg={a}" for a in sim_args),
        "--levels", LEVEL, "--repeat", str(REPEATS), "--stage-s", str(stage_s),
        "--max-tokens", "4", "--prompt-tokens", "64", "--results-dir", str(folder), "--run-id", name,
        "--no-history",
    ]  # fmt: skip
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True)
    return record_of(read_summary(folder / name), str(folder / name))


def first(run: RunRecord, repeats: int) -> RunRecord:
    return replace(run, stages=tuple(s for s in run.stages if s.repeat < repeats))


def trial(candidate: RunRecord, base: RunRecord, repeats: int, metric: str | None) -> str:
    """What the gate said: by the built-in policy, or by one metric's cell of it."""
    result = judge_run(
        first(candidate, repeats), [first(base, repeats)], [], DEFAULT_POLICY, baseline="bench"
    )
    if metric is None:
        return {GateCode.PASS: "pass", GateCode.REGRESSION: "regression"}.get(result.code, "insufficient")
    (cell,) = [c for c in result.cells if c.metric == metric]
    return {CellOutcome.PASS: "pass", CellOutcome.REGRESSION: "regression"}.get(cell.outcome, "insufficient")


def mean_at(runs: list[RunRecord], metric: str) -> float:
    values = [v for r in runs for s in r.stages if (v := s.metric(metric)) is not None]
    return math.fsum(values) / len(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "gate_power.json")
    args = parser.parse_args()
    counts = {"base": 3, "tok5": 1, "ttft": 1} if args.smoke else {"base": 21, "tok5": 10, "ttft": 10}
    stage_s = STAGE_S
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            cond: [sweep(f"{cond}-{i}", CONDITIONS[cond], Path(tmp), stage_s) for i in range(counts[cond])]
            for cond in CONDITIONS
        }
    base = runs["base"]
    result: dict[str, object] = {
        "command": "bench/gate_power.py" + (" --smoke" if args.smoke else ""),
        "level": LEVEL,
        "stage_s": stage_s,
        "requests_per_repeat_min": min(s.requests_ok for r in base for s in r.stages),
        "measured_change": {
            "tok5_output_tok_per_s": mean_at(runs["tok5"], "output_tok_per_s")
            / mean_at(base, "output_tok_per_s")
            - 1,
            "ttft_ttft_p99_ms": mean_at(runs["ttft"], "ttft_p99_ms") / mean_at(base, "ttft_p99_ms") - 1,
            "ttft_output_tok_per_s": mean_at(runs["ttft"], "output_tok_per_s")
            / mean_at(base, "output_tok_per_s")
            - 1,
        },
    }
    pairs = list(itertools.pairwise(base))
    for repeats in (3, 5):
        said = [trial(a, b, repeats, None) for a, b in pairs]
        result[f"identical_pairs_{repeats}"] = {
            k: said.count(k) for k in ("pass", "regression", "insufficient")
        }
        for cond, metric in (("tok5", "output_tok_per_s"), ("ttft", "ttft_p99_ms")):
            for scope in (None, metric):
                said = [trial(c, b, repeats, scope) for c, b in zip(runs[cond], base, strict=False)]
                name = f"{cond}_{repeats}" + ("_policy" if scope is None else f"_{metric}")
                result[name] = {k: said.count(k) for k in ("pass", "regression", "insufficient")}
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if not args.smoke:
        args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
