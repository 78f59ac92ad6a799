"""Issue 39's store: a sweep and a distributed Locust run record themselves once each, from the
process that wrote their summary, and `llmload history` lists them (docs/history.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmload.history.store import Store
from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO, RunLocust
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e


def test_a_sweep_records_itself_once_with_its_labels(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    command = [
        sys.executable, "-m", "llmload.cli", "sweep", "--sim", "vllm", "--levels", "1,2", "--stage-s", "2",
        "--max-tokens", "16", "--prompt-tokens", "16", "--results-dir", str(tmp_path), "--run-id", "swept",
        "--history", str(store), "--label", "image=sim:1", "--label", "hardware=laptop",
    ]  # fmt: skip
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "history: not recorded" not in proc.stderr
    summary = read_checked(tmp_path / "swept" / "summary.json")
    with Store.open(store) as opened:
        runs = opened.runs()
    assert [r.run_id for r in runs] == ["swept"]  # the sweep's child recorded it; the sweep did not
    run = runs[0]
    assert dict(run.labels) == {"image": "sim:1", "hardware": "laptop"}
    assert (run.key.hardware, run.key.output_tokens, run.key.ignore_eos) == ("laptop", "16~0.1", True)
    assert [s.level for s in run.stages] == ["1", "2"]
    assert [s.output_tok_per_s for s in run.stages] == [s["output_tok_per_s"] for s in summary["stages"]]
    assert (run.server.engine, run.verdict, run.exit_code) == ("vllm", "ok", 0)
    assert run.client.git_commit == summary["run"]["reproducibility"]["git_commit"]
    assert run.results_dir == str((tmp_path / "swept").resolve())
    listed = subprocess.run(
        [sys.executable, "-m", "llmload.cli", "history", "--history", str(store)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert listed.returncode == 0 and "1 run(s) of 1 key(s)" in listed.stdout and "swept" in listed.stdout


def test_a_distributed_run_is_recorded_by_its_master_alone(tmp_path: Path, run_locust: RunLocust) -> None:
    store = tmp_path / "history.sqlite"
    with start_sim(["--profile", "vllm"]) as sim:
        run = run_locust(
            sim.url, "--processes", "2", "--max-tokens", "16", "--history", str(store), users=4, run_time="4s"
        )
        off = ("--no-history", "--history", str(tmp_path / "off.sqlite"), "--max-tokens", "16")
        run_locust(sim.url, *off, users=2, run_time="3s", expect_code=None)  # its verdict is not the point
    with Store.open(store) as opened:
        runs = opened.runs()
    assert [r.run_id for r in runs] == [run.summary["run"]["id"]]
    assert runs[0].stages[0].requests_ok == run.summary["stages"][0]["requests"]["ok"]
    assert not (tmp_path / "off.sqlite").exists()


def test_two_demos_are_two_runs_of_one_key(tmp_path: Path) -> None:
    # The README's first command, twice, as a new user runs it: the store is where
    # LLMLOAD_HISTORY says (its default is the user's data directory), nothing else given.
    store = tmp_path / "history.sqlite"
    env = {**os.environ, "LLMLOAD_HISTORY": str(store)}
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "llmload.cli", "demo", "--run-time", "6s", "--users", "4",
             "--max-tokens", "16", "--results-dir", str(tmp_path / "results")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "history: not recorded" not in proc.stdout + proc.stderr
    with Store.open(store) as opened:
        runs = opened.runs()
    assert len(runs) == 2 and runs[0].key == runs[1].key and runs[0].run_id != runs[1].run_id
    listed = subprocess.run(
        [sys.executable, "-m", "llmload.cli", "history"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "2 run(s) of 1 key(s)" in listed.stdout
    assert all(r.run_id in listed.stdout for r in runs), listed.stdout
