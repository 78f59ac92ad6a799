"""Issue 7 item 4: the rendered Jobs' commands and environment, run as local processes.

Each pod of the master and worker Jobs runs as its non-root user with a read-only root
filesystem (tests/k8s/replay.py says how, and which substitutions a machine without a cluster
needs), against the simulator on 127.0.0.1; the run must complete and write summary.json to the
shared results volume. Root is needed for the mount namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.k8s import dockerfile
from tests.k8s.kustomize import Obj, find, pod_labels
from tests.k8s.replay import Pod, log_of, plan_pod, start
from tests.support.truth import request_total

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="the replay needs root for `unshare --mount` (it then drops to the pods' non-root user)",
    ),
    pytest.mark.skipif(
        not (shutil.which("unshare") and shutil.which("setpriv")),
        reason="the replay needs util-linux's unshare and setpriv",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def root() -> Iterator[Path]:
    """The replay's host directory: outside /tmp, which each pod gets as its own tmpfs."""
    path = Path(tempfile.mkdtemp(prefix="llmload-replay-", dir="/var/tmp"))
    path.chmod(0o755)  # the pods' user walks through it to its volumes
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _pods(objects: list[Obj], root: Path) -> tuple[Pod, list[Pod]]:
    image_env, entry = dockerfile.image_env(), dockerfile.entrypoint()
    master = plan_pod(
        objects, find(objects, "Job", "llmload-master"), 0, root, image_env=image_env, entrypoint=entry
    )
    worker_job = find(objects, "Job", "llmload-worker")
    workers = [
        plan_pod(objects, worker_job, i, root, image_env=image_env, entrypoint=entry)
        for i in range(worker_job["spec"]["parallelism"])
    ]
    return master, workers


def _substitute(pods: list[Pod], replace: dict[str, str], master_port: int) -> None:
    """Replace the variables a pod sets (only those it sets); the master binds ``master_port``."""
    for pod in pods:
        pod.env.update({k: v for k, v in replace.items() if k in pod.env})
        if pod.env.get("LLMLOAD_ROLE") == "master":
            pod.env["LOCUST_MASTER_BIND_PORT"] = str(master_port)


def _replay(
    objects: list[Obj], root: Path, replace: dict[str, str], timeout_s: float
) -> tuple[dict[str, int | None], dict[str, str]]:
    """Run master and workers to the end; returns each pod's exit status and log."""
    master, workers = _pods(objects, root)
    port = _free_port()
    _substitute(
        [master, *workers],
        {
            "LOCUST_MASTER_NODE_HOST": "127.0.0.1",
            "LOCUST_MASTER_NODE_PORT": str(port),
            "LLMLOAD_PROMETHEUS_PORT": str(_free_port()),
            **replace,
        },
        port,
    )
    procs = {pod.name: start(pod, root) for pod in [master, *workers]}
    deadline = time.monotonic() + timeout_s
    try:
        for proc in procs.values():
            proc.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    codes: dict[str, int | None] = {name: p.returncode for name, p in procs.items()}
    logs = {pod.name: log_of(pod, root) for pod in [master, *workers]}
    return codes, logs


def _explain(codes: dict[str, int | None], logs: dict[str, str]) -> str:
    """Each pod's exit and the end of its log, after every error line wherever it fell: a
    handler's traceback early in a master's log is what explains a run that measured nothing."""

    def errors(log: str) -> str:
        lines = [line for line in log.splitlines() if any(w in line for w in ("Traceback", "ERROR", "Error"))]
        return "".join(f"{line}\n" for line in lines[:20]) + ("...\n" if lines else "")

    return "\n".join(
        f"--- {name}: exit {codes[name]}\n{errors(log)}{log[-3000:]}" for name, log in logs.items()
    )


def _summary(objects: list[Obj], root: Path) -> dict[str, Any]:
    run_id = pod_labels(find(objects, "Job", "llmload-master"))["llmload.io/run-id"]
    path = root / "claims" / "llmload-results" / run_id / "summary.json"
    assert path.exists(), f"no {path}: " + ", ".join(str(p) for p in root.rglob("*") if p.is_file())
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_sandbox_is_non_root_with_a_read_only_root(rendered: dict[str, list[Obj]], root: Path) -> None:
    master, _ = _pods(rendered["base+results-pvc"], root)
    results = master.env["LLMLOAD_RESULTS_DIR"]
    master.argv = [
        "/bin/sh",
        "-c",
        (
            "id -u; id -g; grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status;"
            "touch /var/tmp/probe || echo var-tmp-denied;"
            f"touch {dockerfile.DOCKERFILE.parent}/probe 2>/dev/null || echo repo-denied;"
            "mkdir -p $HOME $MPLCONFIGDIR && touch /tmp/probe && echo tmp-ok;"
            f"touch {results}/probe && echo results-ok;"
            f"python -c 'import llmload, locust' && echo python-ok"
        ),
    ]
    proc = start(master, root)
    assert proc.wait(30) == 0, log_of(master, root)
    out = log_of(master, root)
    uid = str(master.uid)
    assert out.splitlines()[:2] == [uid, str(master.gid)] and uid != "0", out
    assert "NoNewPrivs:\t1" in out and "CapEff:\t0000000000000000" in out, out
    assert "CapBnd:\t0000000000000000" in out, out
    assert "Read-only file system" in out and "var-tmp-denied" in out, out
    for line in ("repo-denied", "tmp-ok", "results-ok", "python-ok"):
        assert line in out, out
    assert (Path(results) / "probe").exists()
    assert not Path("/var/tmp/probe").exists()


def _assert_records_reached_the_claim(summary: dict[str, Any], run_dir: Path, worker_processes: int) -> None:
    """Every worker process wrote its per-request records to the shared results volume, and the
    master's statistics hold every one of them: no worker's report was lost or left unread."""
    listed = summary["run"]["records"]
    assert len(listed) == worker_processes, listed
    total = 0
    for entry in listed:
        lines = (run_dir / entry["records_file"]).read_text().splitlines()
        assert len(lines) == entry["records"], entry
        total += len(lines)
    assert request_total(summary) == total and summary["run"]["lost_workers"] == []


def _worker_processes(objects: list[Obj]) -> int:
    worker = find(objects, "Job", "llmload-worker")
    env = {e["name"]: e.get("value") for e in worker["spec"]["template"]["spec"]["containers"][0]["env"]}
    return int(worker["spec"]["parallelism"]) * int(env.get("LOCUST_PROCESSES") or 1)


# The short run: the simulator instead of the server, 32 tokens per request instead of 256.
SHORT = {"LLMLOAD_MAX_TOKENS": "32"}


def test_chat_jobs_replay_against_the_simulator(rendered: dict[str, list[Obj]], root: Path) -> None:
    objects = rendered["base+results-pvc"]
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        codes, logs = _replay(
            objects,
            root,
            {
                **SHORT,
                "LOCUST_HOST": sim.url,
                # Four worker processes start their users on a starved machine seconds into the
                # run (6 s of 10 in one CI run beside a busy loop, which then measured nothing).
                "LOCUST_RUN_TIME": "20s",
                "LOCUST_USERS": "4",
                "LOCUST_SPAWN_RATE": "4",
            },
            timeout_s=60,
        )
    assert all(code == 0 for code in codes.values()), _explain(codes, logs)
    summary = _summary(objects, root)
    assert summary["complete"] is True
    (stage,) = summary["stages"]
    assert stage["requests"]["ok"] > 0, _explain(codes, logs)
    assert stage["requests"]["failed"] == 0
    run_dir = root / "claims" / "llmload-results" / summary["run"]["id"]
    _assert_records_reached_the_claim(summary, run_dir, _worker_processes(objects))


def test_sweep_jobs_replay_against_the_simulator(rendered: dict[str, list[Obj]], root: Path) -> None:
    objects = rendered["overlays/sweep+results-pvc"]
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim:
        codes, logs = _replay(
            objects,
            root,
            {**SHORT, "LOCUST_HOST": sim.url, "LLMLOAD_LEVELS": "1,2", "LLMLOAD_STAGE_S": "2"},
            timeout_s=60,
        )
    assert all(code == 0 for code in codes.values()), _explain(codes, logs)
    summary = _summary(objects, root)
    assert summary["complete"] is True
    assert [s["concurrency"] for s in summary["stages"]] == [1, 2]
    assert all(s["requests"]["ok"] > 0 for s in summary["stages"]), _explain(codes, logs)
    run_dir = root / "claims" / "llmload-results" / summary["run"]["id"]
    _assert_records_reached_the_claim(summary, run_dir, _worker_processes(objects))
