"""Ramps and saturation against the simulator: --until-saturated stops where the batch is full,
and a ramp's steps are stages at the ramp's user counts."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from tests.e2e.test_sweep import sweep
from tests.support.prometheus import free_port
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

MAX_BATCH = 16  # the simulator's --max-running: past it requests queue, tok/s stays flat
STAGE_S = 3
# A step's window closes when the conductor's ticker wakes at its deadline: late by that one
# wake-up (the loop lag the judge measures) and a tick's own work. Before the ticker woke at
# deadlines it slept 100 ms after each tick's work, and a first window ran 20 to 27 ms long.
TICK_BASE_MS = 10.0


@pytest.mark.long
def test_until_saturated_stops_where_the_simulators_batch_is_full(tmp_path: Path) -> None:
    # --processes 2: the master decides from the fleet's merged numbers, not one process's
    levels = "4,8,16,32,64,128"
    code, summary, output = sweep(
        tmp_path,
        "sat",
        "--sim",
        "vllm",
        "--sim-arg=--max-running",
        f"--sim-arg={MAX_BATCH}",
        "--levels",
        levels,
        "--stage-s",
        "4",
        "--max-tokens",
        "64",
        "--until-saturated",
        "--processes",
        "2",
        "--",
        # a port of its own: another run's workers must not join this master (Locust's 5557)
        "--master-bind-port",
        str(port := free_port()),
        "--master-port",
        str(port),
    )
    assert code == 0, output[-3000:]
    # a worker connects before its llmload handlers exist: the master waits for its word
    assert "Unknown message type" not in output, output[-3000:]
    found = summary["headline"]["saturation"]
    assert found["concurrency"] == MAX_BATCH, found
    # the level above the batch showed it; the two after were never run
    assert [s["concurrency"] for s in summary["stages"]] == [4, 8, 16, 32]
    assert found["stopped_sweep"] and found["levels_not_run"] == ["concurrency 64", "concurrency 128"]
    assert "TTFT p50" in found["reason"] and summary["complete"]
    assert f"saturation: C={MAX_BATCH}" in output
    assert "from C=16 to C=32" in (tmp_path / "sat" / "report.html").read_text()


# alone: beside five other tests a first window ran 65 ms long with the canary's worst wake-up
# at 17 ms (a busy process waits for a core, a sleeper does not)
@pytest.mark.timing
def test_a_ramp_runs_one_stage_per_step_at_the_steps_user_count(tmp_path: Path, judge: Judge) -> None:
    judge.during(time.perf_counter_ns())  # the stages' windows, where the summary has them
    code, summary, output = sweep(
        tmp_path, "ramp", "--sim", "vllm", "--ramp", "2:8:2", "--stage-s", str(STAGE_S), "--max-tokens", "32"
    )
    assert code == 0, output[-3000:]
    stages = summary["stages"]
    assert [s["concurrency"] for s in stages] == [2, 4, 6, 8]
    judge.client(summary)
    print(
        "windows (s):", [s["duration_s"] for s in stages], "tok/s:", [s["output_tok_per_s"] for s in stages]
    )
    furthest = max((s["duration_s"] for s in stages), key=lambda d: abs(d - STAGE_S))
    judge.close(
        furthest * 1000, STAGE_S * 1000, TICK_BASE_MS, Stat.EVERY, "a step's window, the furthest off"
    )
    # only the first step warms up; later steps open their window as they begin
    assert stages[0]["requests"]["warmup"] >= 2
    assert [s["requests"]["warmup"] for s in stages[1:]] == [0, 0, 0]
    tok = [s["output_tok_per_s"] for s in stages]
    # not timing: below the batch limit each step adds a quarter or more of the model's
    # throughput, an order far beyond what noise at a 3 s window's edges moves
    assert tok == sorted(tok), tok
    records = [
        orjson.loads(line)
        for line in (tmp_path / "ramp" / "requests.jsonl").read_bytes().splitlines()
        if line
    ]
    for stage in stages:
        sent = [r for r in records if r["stage"] == stage["index"] and r["phase"] == "measure"]
        assert len({r["user"] for r in sent}) == stage["concurrency"]
        assert max_in_flight(sent) == stage["concurrency"]


def max_in_flight(records: list[dict[str, int]]) -> int:
    edges = sorted([(r["sent_ns"], 1) for r in records] + [(r["done_ns"], -1) for r in records])
    most = now = 0
    for _t, step in edges:
        now += step
        most = max(most, now)
    return most
