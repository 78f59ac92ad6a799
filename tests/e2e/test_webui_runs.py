"""Every swarm started from Locust's web UI is a run of its own (local, and a master with
workers): the user count it was started with, the llmload options of its start form, its own
results directory and salt, and a second swarm after the first measures again instead of
writing to the first run's closed files."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO
from tests.support.fleet import free_port
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e

SWARMS = (4, 2)


def _locust(*args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "locust", "-f", "locustfiles/chat.py", *args],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _until(ok: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ok():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _swarms(ui: str, host: str, workers: int) -> None:
    with httpx.Client(base_url=ui, timeout=10) as http:

        def ready() -> bool:
            try:
                return http.get("/stats/requests").status_code == 200 and (
                    workers == 0 or http.get("/stats/requests").json().get("worker_count") == workers
                )
            except httpx.TransportError:
                return False

        _until(ready, 60, "the web UI (and its workers)")
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
            _until(lambda n=users: http.get("/stats/requests").json()["user_count"] == n, 30, "the users")
            time.sleep(8)
            assert http.post("/stop").json()["success"]
            _until(lambda: http.get("/stats/requests").json()["state"] == "stopped", 60, "the stop")
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
    web, master = free_port(), free_port()
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        common = ["--host", sim.url, "--max-tokens", "16", "--ignore-eos", "--results-dir", str(results)]
        logs = [tmp_path / "master.log"]
        role = (
            ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master)]
            if workers
            else []
        )
        main = _locust("--web-host", "127.0.0.1", "--web-port", str(web), *role, *common, log=logs[0])
        procs = [main]
        try:
            for i in range(workers):
                logs.append(tmp_path / f"worker-{i}.log")
                procs.append(
                    _locust(
                        "--worker", "--master-host", "127.0.0.1", "--master-port", str(master), log=logs[-1]
                    )
                )
            _swarms(f"http://127.0.0.1:{web}", sim.url, workers)
            main.send_signal(signal.SIGINT)
            assert main.wait(60) == 0
            for worker in procs[1:]:
                assert worker.wait(30) is not None
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(10)
    _check_runs(results, logs, workers)
