"""Every swarm started from Locust's web UI is a run of its own (local, and a master with
workers): the user count it was started with, the llmload options of its start form, its own
results directory and salt, and a second swarm after the first measures again instead of
writing to the first run's closed files."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from llmload.sim.process import start_sim
from tests.support.schema import read_checked
from tests.support.webui import until, web_ui

pytestmark = pytest.mark.e2e

SWARMS = (4, 2)


def _swarms(ui: str, host: str) -> None:
    with httpx.Client(base_url=ui, timeout=10) as http:
        for users in SWARMS:
            # llmload's options are on the start form ("Custom parameters"), an empty field
            # included, and hold for that swarm only
            form = {
                "user_count": users,
                "spawn_rate": users,
                "host": host,
                "max_tokens": 2 * users,
                "model": "",
                "warmup_requests": "",
            }
            started = http.post("/swarm", data=form)
            assert started.json()["success"], started.text
            # A bounded wait, not a claim: two workers beside a busy loop took over 30 s once in CI.
            until(lambda n=users: http.get("/stats/requests").json()["user_count"] == n, 90, "the users")
            time.sleep(8)
            assert http.post("/stop").json()["success"]
            until(lambda: http.get("/stats/requests").json()["state"] == "stopped", 60, "the stop")
            time.sleep(1)  # the run's results are written at test_stop, right after the state


def _check_runs(results: Path, logs: list[Path], workers: int) -> None:
    output = "".join(log.read_text(errors="replace") for log in logs)
    assert "Traceback" not in output and "closed file" not in output, output[-4000:]
    runs = sorted(results.iterdir(), key=lambda d: d.stat().st_mtime)
    summaries = [read_checked(d / "summary.json") for d in runs]
    assert [s["stages"][0]["concurrency"] for s in summaries] == list(SWARMS)
    for s in summaries:
        stage = s["stages"][0]
        assert s["exit"]["code"] == 0 and stage["requests"]["ok"] > 20, s["exit"]
        assert stage["output_tokens_per_request"]["mean"] == 2 * stage["concurrency"]  # the form's
        assert s["headline"]["single_stream_tok_per_s"] is None  # no stage ran one user
        assert s["run"]["reproducibility"]["workers"] == max(workers, 1)
    assert len({s["run"]["reproducibility"]["salt"] for s in summaries}) == len(SWARMS)
    assert len({s["run"]["id"] for s in summaries}) == len(SWARMS)
    for run in runs:
        assert (run / "report.html").is_file()


@pytest.mark.parametrize("workers", [0, 2])
def test_each_web_ui_swarm_is_a_run_at_its_own_user_count(tmp_path: Path, workers: int) -> None:
    results = tmp_path / "results"
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        args = ["--host", sim.url, "--max-tokens", "16", "--ignore-eos", "--results-dir", str(results)]
        with web_ui(tmp_path, args, workers) as (url, logs):
            _swarms(url, sim.url)
    _check_runs(results, logs, workers)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_user_count_edit_mid_run_starts_a_stage_at_the_new_count(tmp_path: Path, workers: int) -> None:
    """The web UI's "Edit" of a running test posts a new user count: the stage at the old
    count closes and one at the new count warms up and measures, in the same run."""
    results = tmp_path / "results"
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        args = ["--host", sim.url, "--max-tokens", "16", "--ignore-eos", "--results-dir", str(results)]
        with web_ui(tmp_path, args, workers) as (url, logs), httpx.Client(base_url=url, timeout=10) as http:
            assert http.post("/swarm", data={"user_count": 4, "spawn_rate": 4, "host": sim.url}).json()[
                "success"
            ]
            until(lambda: http.get("/stats/requests").json()["user_count"] == 4, 90, "4 users")
            time.sleep(6)
            # the Edit form: a user count and a spawn rate, while running
            assert http.post("/swarm", data={"user_count": 2, "spawn_rate": 2}).json()["success"]
            until(lambda: http.get("/stats/requests").json()["user_count"] == 2, 90, "2 users")
            time.sleep(8)
            assert http.post("/stop").json()["success"]
            until(lambda: http.get("/stats/requests").json()["state"] == "stopped", 60, "the stop")
            time.sleep(1)
    output = "".join(log.read_text(errors="replace") for log in logs)
    assert "Traceback" not in output, output[-4000:]
    (run,) = results.iterdir()
    summary = read_checked(run / "summary.json")
    assert summary["exit"]["code"] == 0, summary["exit"]
    stages = summary["stages"]
    assert [s["concurrency"] for s in stages] == [4, 2]
    for stage in stages:
        # not timing: floors that say each stage ran (6 and 8 s at 4 and 2 users); noise only lengthens
        assert stage["requests"]["ok"] > 5 and stage["duration_s"] > 2, stage["requests"]
        assert stage["requests"]["warmup"] > 0  # each stage warmed up at its own count
