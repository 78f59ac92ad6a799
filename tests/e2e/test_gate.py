"""`llmload gate` on sweeps of the simulator, as a CI pipeline runs it (docs/history.md): the
same engine twice passes, the engine 5% and 10% slower (``--slowdown``) fails with exit code 1,
one repeat is "insufficient data" (3), a p99 over too few requests too, an accepted regression
passes naming its reason; the Markdown and JUnit outputs say the same."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO

# The identical pair must differ by less than the policy's 3%: on a machine shared with other
# tests a whole run can be slower than the next, so the test takes the machine.
pytestmark = [pytest.mark.e2e, pytest.mark.alone]

POLICY = """
repeats = 3
[metrics.output_tok_per_s]
min_effect = 0.03
[metrics.tpot_p50_ms]
min_effect = 0.03
[metrics.ttft_p50_ms]
min_effect = 0.05
"""


def llmload(*args: str, store: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "llmload.cli", *args, "--history", str(store)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def sweep(name: str, *, store: Path, tmp: Path, repeat: int = 3, slowdown: float = 1.0) -> None:
    proc = llmload(
        "sweep", "--sim", "vllm", f"--sim-arg=--slowdown={slowdown}", "--levels", "8",
        "--repeat", str(repeat), "--stage-s", "2", "--max-tokens", "32", "--prompt-tokens", "32",
        "--results-dir", str(tmp / "results"), "--run-id", name, "--label", f"image=sim:{slowdown}",
        store=store, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_the_gate_passes_the_same_engine_and_fails_it_five_and_ten_percent_slower(tmp_path: Path) -> None:
    store, policy = tmp_path / "history.sqlite", tmp_path / "gate.toml"
    policy.write_text(POLICY)
    for name, slowdown in (("base", 1.0), ("same", 1.0), ("slow5", 1 / 0.95), ("slow10", 1 / 0.9)):
        sweep(name, store=store, tmp=tmp_path, slowdown=slowdown)
    sweep("once", store=store, tmp=tmp_path, repeat=1)
    pinned = llmload("history", "pin", "base", "--as", "main", store=store, cwd=tmp_path)
    assert pinned.returncode == 0 and "'main' is run base" in pinned.stdout, pinned.stderr

    def gate(run: str, *more: str) -> subprocess.CompletedProcess[str]:
        return llmload(
            "gate", run, "--baseline", "main", "--policy", str(policy), *more, store=store, cwd=tmp_path
        )

    same = gate("same")
    assert same.returncode == 0 and "llmload gate: pass: 3 cells" in same.stdout, same.stdout + same.stderr
    for run in ("slow5", "slow10"):
        slow = gate(run)
        assert slow.returncode == 1, slow.stdout + slow.stderr
        assert "regression" in slow.stdout and "output_tok_per_s" in slow.stdout
    once = gate("once")
    assert once.returncode == 3 and "1 repeat(s) against 3" in once.stdout, once.stdout
    # the built-in policy gates TTFT p99, which these short stages cannot carry
    tails = llmload("gate", "same", "--baseline", "main", store=store, cwd=tmp_path)
    assert tails.returncode == 3 and "quantile needs 459" in tails.stdout, tails.stdout

    junit = tmp_path / "gate.xml"
    md = gate("slow10", "--format", "md", "--junit", str(junit))
    assert md.returncode == 1 and md.stdout.startswith("### REGRESSION: run slow10"), md.stdout
    assert "| output_tok_per_s | 8 |" in md.stdout and "worse" in md.stdout
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "3", "0")

    accepted = llmload(
        "gate", "accept", "slow10", "--reason", "trades tok/s for memory", store=store, cwd=tmp_path
    )
    assert accepted.returncode == 0, accepted.stderr
    waived = gate("slow10")
    assert waived.returncode == 0 and "accepted: trades tok/s for memory" in waived.stdout, waived.stdout
    # a rolling baseline of the key's last runs: slow10 is judged against slow5, same and base
    rolling = llmload(
        "gate", "slow10", "--baseline", "rolling:3", "--policy", str(policy), store=store, cwd=tmp_path
    )
    assert "against the last 3 comparable runs (3 run(s))" in rolling.stdout, rolling.stdout
    # compare takes the pinned baseline by name, first, so its ratios are to it
    compared = llmload(
        "compare", "--baseline", "main", str(tmp_path / "results" / "slow10"), store=store, cwd=tmp_path
    )
    assert compared.returncode == 0, compared.stderr
    legend = [line for line in compared.stdout.splitlines() if "  ·  " in line]
    assert "base" in legend[0] and "slow10" in legend[1], compared.stdout
