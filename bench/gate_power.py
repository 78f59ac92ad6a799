"""The gate's false-alarm rate and power on regressions of known size (docs/history.md).

    .venv/bin/python bench/gate_power.py            # 21 + 10 + 10 sweeps of 5 repeats; ~20 minutes
    .venv/bin/python bench/gate_power.py --smoke    # CI: 4 + 1 + 1 sweeps, nothing kept

Every sweep is a process of its own with a simulator of its own (``llmload sweep --sim vllm``),
one level, five repeats. The engine is the vllm profile as it is (``base``), the same profile
5% slower in tok/s (``--slowdown 1/0.95``), and the same profile with a slower prefill
(``--prefill-slowdown``, sized to move TTFT's p99 by about 10%; the measured change is
reported, since a slower prefill also slows the batch it joins). A trial is a sweep judged by
``llmload.results.gate.judge_run`` as ``llmload gate`` judges the newest run of a store: against
the default policy's rolling baseline (the last 5 comparable runs), with the runs before it as
the key's history, at 3 and at 5 repeats (the first N of each sweep):

- false alarms: each base sweep after the first, judged against the base sweeps before it
  (20 trials from 21 sweeps; the first ones have less than the 3 runs of history the gate's
  run-to-run noise needs, and say so), goal: 0 called a regression, at most 1 "insufficient";
- power: each slower sweep judged against the 21 base sweeps as its history (goal: at least
  90% found at 5 repeats), by the built-in policy and by the regressed metric's cell alone.

Each false alarm's cells are kept in the output. Writes bench/results/gate_power.json.
"""

from __future__ import annotations

import argparse
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
PREFILL_SLOWDOWN = 1.25  # 1.5 moved TTFT's p99 by 20% (measured 2026-12-05)
CONDITIONS = {
    "base": [],
    "tok5": [f"--slowdown={1 / 0.95}"],
    "ttft": [f"--prefill-slowdown={PREFILL_SLOWDOWN}"],
}
# The simulator is the server under test with a regression of known size: at SCHED_FIFO its
# steps are not delayed by whatever else this shared machine runs, as a GPU server's are not by
# the load generator's neighbours (without it, 2026-12-06, a few whole sweeps of the same engine
# ran 8.7-15.9% slower in a TTFT quantile or TPOT p50 than the rest).
SIM_ARGS = ["--realtime"]


def sweep(name: str, sim_args: list[str], folder: Path, stage_s: float) -> RunRecord:
    """One sweep, or the one ``folder`` already holds under ``name`` (judged again as it is)."""
    if not (folder / name / "summary.json").exists():
        command = [
            sys.executable, "-m", "llmload.cli", "sweep", "--sim", "vllm",
            *(f"--sim-arg={a}" for a in [*SIM_ARGS, *sim_args]),
            "--levels", LEVEL, "--repeat", str(REPEATS), "--stage-s", str(stage_s),
            "--max-tokens", "4", "--prompt-tokens", "64", "--results-dir", str(folder),
            "--run-id", name, "--no-history",
        ]  # fmt: skip
        subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True)
    return record_of(read_summary(folder / name), str(folder / name))


def first(run: RunRecord, repeats: int) -> RunRecord:
    return replace(run, stages=tuple(s for s in run.stages if s.repeat < repeats))


def trial(
    candidate: RunRecord, history: list[RunRecord], repeats: int, metric: str | None
) -> tuple[str, list[str]]:
    """What the gate said of ``candidate`` with ``history`` (newest first) behind it, by the
    built-in policy or by one metric's cell of it, and the cells it called regressions."""
    rolling = DEFAULT_POLICY.baseline.rolling or 5
    past = [first(r, repeats) for r in history]
    result = judge_run(first(candidate, repeats), past[:rolling], past, DEFAULT_POLICY, baseline="bench")
    called = [f"{c.name} {c.why}" for c in result.cells if c.outcome is CellOutcome.REGRESSION]
    if metric is None:
        said = {GateCode.PASS: "pass", GateCode.REGRESSION: "regression"}.get(result.code, "insufficient")
        return said, called
    (cell,) = [c for c in result.cells if c.metric == metric]
    said = {CellOutcome.PASS: "pass", CellOutcome.REGRESSION: "regression"}.get(cell.outcome, "insufficient")
    return said, called


def tally(said: list[str]) -> dict[str, int]:
    return {k: said.count(k) for k in ("pass", "regression", "insufficient")}


def mean_at(runs: list[RunRecord], metric: str) -> float:
    values = [v for r in runs for s in r.stages if (v := s.metric(metric)) is not None]
    return math.fsum(values) / len(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "gate_power.json")
    parser.add_argument(
        "--runs",
        type=Path,
        help="keep the sweeps here (default: a temporary folder); those it holds are reused",
    )
    args = parser.parse_args()
    counts = {"base": 4, "tok5": 1, "ttft": 1} if args.smoke else {"base": 21, "tok5": 10, "ttft": 10}
    stage_s = STAGE_S
    # Interleaved (base, tok5, ttft, base, ...): a machine whose state drifts over the 20 minutes
    # moves every condition alike, not one condition's block of sweeps.
    order = sorted(
        ((i, cond) for cond, n in counts.items() for i in range(n)),
        key=lambda p: (p[0], list(CONDITIONS).index(p[1])),
    )
    runs: dict[str, list[RunRecord]] = {cond: [] for cond in CONDITIONS}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.runs or Path(tmp)
        for i, cond in order:
            runs[cond].append(sweep(f"{cond}-{i}", CONDITIONS[cond], folder, stage_s))
    base = runs["base"]
    result: dict[str, object] = {
        "prefill_slowdown": PREFILL_SLOWDOWN,
        "sim_args": SIM_ARGS,
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
    newest_first = base[::-1]
    for repeats in (3, 5):
        trials = [trial(base[i], newest_first[len(base) - i :], repeats, None) for i in range(1, len(base))]
        result[f"identical_pairs_{repeats}"] = tally([said for said, _ in trials])
        result[f"identical_pairs_{repeats}_alarms"] = {
            f"base-{i + 1}": called for i, (said, called) in enumerate(trials) if said == "regression"
        }
        for cond, metric in (("tok5", "output_tok_per_s"), ("ttft", "ttft_p99_ms")):
            for scope in (None, metric):
                said = [trial(c, newest_first, repeats, scope)[0] for c in runs[cond]]
                name = f"{cond}_{repeats}" + ("_policy" if scope is None else f"_{metric}")
                result[name] = tally(said)
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if not args.smoke:
        args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
