"""A server that wants an API key kept in a variable of the user's choosing, named by
``--api-key-env`` or ``LLMLOAD_API_KEY_ENV``: every step of ``llmload sweep`` and ``llmload tune``
that talks to it sends that key (the readiness wait, ``--processes auto``'s pace probe, the
fingerprint and cache reset, the run), not ``OPENAI_API_KEY``'s."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO
from tests.support.prometheus import free_port
from tests.support.schema import read_checked

pytestmark = pytest.mark.e2e

KEY = "sk-kept-elsewhere-4b1d"
VARIABLE = "TEAM_LLM_KEY"
FAST = ["--ttft-ms", "5", "--step-ms", "2", "--api-key", KEY]  # 500 tok/s a stream: no calibration
SHORT = ["--stage-s", "1", "--max-tokens", "4", "--results-dir"]


def _env(**extra: str) -> dict[str, str]:
    """The user's environment: the key in their own variable, none in OPENAI_API_KEY."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LLMLOAD_API_KEY_ENV")}
    return {**env, VARIABLE: KEY, **extra}


def _llmload(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``llmload ARGS`` in a child with ``env``, its output captured."""
    command = [sys.executable, "-m", "llmload.cli", *map(str, args)]
    return subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=99)


def _ok(summary: Path) -> int:
    return int(read_checked(summary)["stages"][0]["requests"]["ok"])


def test_a_sweep_waits_for_and_runs_with_the_key_llmload_api_key_env_names(tmp_path: Path) -> None:
    with start_sim(FAST) as sim:
        proc = _llmload(
            "sweep", "--host", sim.url, "--levels", "1", *SHORT, tmp_path, "--run-id", "r",
            "--processes", "0", env=_env(LLMLOAD_API_KEY_ENV=VARIABLE),
        )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert KEY not in output
    assert _ok(tmp_path / "r" / "summary.json") > 0


def test_processes_auto_asks_the_pace_with_the_key_api_key_env_names(tmp_path: Path) -> None:
    """Eight streams could outrun one process, so ``auto`` asks the server's pace first."""
    with start_sim(FAST) as sim:
        proc = _llmload(
            "sweep", "--host", sim.url, "--no-wait", "--levels", "8", *SHORT, tmp_path, "--run-id", "r",
            "--processes", "auto", "--", "--api-key-env", VARIABLE, env=_env(),
        )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "streamed no pace" not in output, output[-3000:]
    assert _ok(tmp_path / "r" / "summary.json") > 0


EXPERIMENT = """
name = "keyed"

[server]
command = "{python} -m llmload.sim --port {port} --log-file {log} SIM"
url = "http://127.0.0.1:{port}"
ready_timeout_s = 30

[[configs]]
name = "sim"

[client]
levels = [1]
stage_s = 1
max_tokens = 4
processes = "0"
"""


def test_a_tune_waits_for_and_sweeps_with_the_key_llmload_api_key_env_names(tmp_path: Path) -> None:
    experiment = tmp_path / "keyed.toml"
    experiment.write_text(EXPERIMENT.replace("SIM", " ".join(FAST)))
    proc = _llmload("tune", experiment, "--results-dir", tmp_path, env=_env(LLMLOAD_API_KEY_ENV=VARIABLE))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert _ok(tmp_path / "keyed" / "sim" / "summary.json") > 0


@pytest.mark.parametrize("processes", ["0", "2"])
def test_a_run_the_server_refuses_at_its_start_says_so_as_its_verdict(tmp_path: Path, processes: str) -> None:
    """No wait to catch the 401 first: the run itself meets it, in its one process or in each
    worker, and ends as a run that could not start, not as an interrupted one."""
    port = free_port()  # a master of its own: another test's workers must not join it
    with start_sim(FAST) as sim:
        proc = _llmload(
            "sweep", "--host", sim.url, "--no-wait", "--levels", "2", *SHORT, tmp_path, "--run-id", "r",
            "--processes", processes, "--", "--master-bind-port", str(port), "--master-port", str(port),
            env=_env(),
        )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "Traceback" not in output and "interrupted" not in output, output[-3000:]
    assert "HTTP 401: the server wants an API key" in output, output[-3000:]
    summary = read_checked(tmp_path / "r" / "summary.json")
    assert summary["exit"]["name"] == "could_not_start", summary["exit"]
    assert summary["exit"]["line"].startswith("could not start: "), summary["exit"]
    assert "HTTP 401" in summary["exit"]["line"] and summary["run"]["stopped"]["by"] == "refused"
    assert summary["stages"] == [] and not summary["run"]["lost_workers"]
    sent = [f for f in (tmp_path / "r").glob("requests*.jsonl") if f.read_bytes().strip()]
    assert sent == [], sent  # no user sent a request (the simulator keeps no 401s to count)
