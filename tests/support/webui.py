"""Locust's web UI from a test: a real ``locust`` process serving it on 127.0.0.1 (and its
workers), and polling until the page's state says so."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.fleet import REPO, free_port


def until(ok: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ok():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"  # not timing: a bounded wait
        time.sleep(0.2)


@contextmanager
def web_ui(tmp_path: Path, args: list[str], workers: int = 0) -> Iterator[tuple[str, list[Path]]]:
    """``locust -f locustfiles/chat.py ARGS`` with its UI on a free port, a master with
    ``workers`` workers when asked; yields its URL and every process's log once the UI answers
    (with every worker connected). SIGINT when the block ends: it must exit 0."""
    web, master = free_port(), free_port()
    role = (
        ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master)] if workers else []
    )
    commands = [["--web-host", "127.0.0.1", "--web-port", str(web), *role, *args]]
    commands += [["--worker", "--master-host", "127.0.0.1", "--master-port", str(master)]] * workers
    logs, procs = [], []
    try:
        for i, command in enumerate(commands):
            logs.append(tmp_path / ("locust.log" if i == 0 else f"worker-{i}.log"))
            with logs[-1].open("wb") as out:  # the child keeps its own copy of the descriptor
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "locust", "-f", "locustfiles/chat.py", *command],
                        cwd=REPO,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        url = f"http://127.0.0.1:{web}"

        def ready() -> bool:
            try:
                stats = httpx.get(f"{url}/stats/requests", timeout=5).json()
            except (httpx.TransportError, ValueError):
                return False
            return workers == 0 or stats.get("worker_count") == workers

        until(ready, 60, "the web UI (and its workers)")
        yield url, logs
        procs[0].send_signal(signal.SIGINT)
        assert procs[0].wait(60) == 0
        for worker in procs[1:]:
            worker.wait(30)
    except BaseException:
        for log in logs:  # what each process said, in the failure's report
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(none)"
            print(f"--- {log.name}, its last 3,000 characters:\n{tail}", file=sys.stderr)
        raise
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
