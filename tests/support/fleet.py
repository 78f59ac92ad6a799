"""A real distributed run: one Locust master and N worker processes, each its own subprocess.

Every process writes its stdout and stderr to a file of its own (a pipe nobody drains stalls
Locust). A process may be started under a command prefix, e.g. ``ip netns exec NS``, so it runs
in a network namespace. ``LocustFleet`` is a context manager: on exit it kills what is still
running, whatever happened, so a failed test never leaves processes behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import orjson
import psutil

from tests.support.schema import read_checked

REPO = Path(__file__).resolve().parents[2]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def own_master_port(args: Sequence[str]) -> list[str]:
    """Locust flags that give a ``--processes`` run's master a port of its own: tests run side
    by side, and two masters on Locust's default port would take each other's workers."""
    if "--processes" not in args or "--master-bind-port" in args:
        return []
    port = str(free_port())
    return ["--master-bind-port", port, "--master-port", port]


def tokenize_flag(args: Sequence[str], tokenize: str | None) -> list[str]:
    """``--tokenize TOKENIZE`` unless ``args`` give one, or ``tokenize`` is None (the command
    line's default, ``auto``). The tier's runs default to ``off``: their tests were written
    against prompts in words, and many count the simulator's requests, to which ``auto``'s
    calibration adds a probe request per process."""
    if tokenize is None or any(a == "--tokenize" or a.startswith("--tokenize=") for a in args):
        return []
    return ["--tokenize", tokenize]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    started: float
    _file: IO[bytes]

    def output(self) -> str:
        if not self._file.closed:
            self._file.flush()
        return self.log.read_text(errors="replace")

    def wait(self, timeout_s: float) -> int:
        return self.popen.wait(timeout_s)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.popen.poll() is None:
            # The process group: `ip netns exec` and `--processes` both have children.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)


class LocustFleet:
    """Start a master and workers of one run; read its results directory afterwards."""

    def __init__(
        self,
        tmp: Path,
        host: str,
        *,
        locustfile: str = "locustfiles/chat.py",
        run_id: str = "run",
        master_host: str = "127.0.0.1",
    ) -> None:
        self.tmp = tmp
        self.host = host
        self.locustfile = str(REPO / locustfile)
        self.run_id = run_id
        self.results_root = tmp / "results"
        self.results = self.results_root / run_id
        self.master_host = master_host
        self.master_port = free_port() if master_host.startswith("127.") else 5557
        self.master: Proc | None = None
        self.workers: list[Proc] = []

    def __enter__(self) -> LocustFleet:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()
        if exc is not None:
            for p in self.procs():
                print(f"----- {p.name} (exit {p.popen.returncode}) -----\n{p.output()[-3000:]}")

    def procs(self) -> list[Proc]:
        return ([self.master] if self.master else []) + self.workers

    def _spawn(
        self, name: str, args: Sequence[str], prefix: Sequence[str], env: dict[str, str] | None
    ) -> Proc:
        log = self.tmp / f"{name}.log"
        f = log.open("wb")
        command = [
            *prefix,
            sys.executable,
            "-m",
            "locust",
            "-f",
            self.locustfile,
            "--loglevel",
            "WARNING",
            *args,
        ]
        popen = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        return Proc(name, popen, log, time.monotonic(), f)

    def start_master(
        self,
        *args: str,
        workers: int,
        users: int = 0,
        run_time: str | None = None,
        prefix: Sequence[str] = (),
        env: dict[str, str] | None = None,
        tokenize: str | None = "off",
    ) -> Proc:
        """``tokenize``: the ``--tokenize`` the workers are given unless ``args`` give one
        (``tokenize_flag``); None: the command line's default."""
        timing = ["-u", str(users), "-r", str(users)] if users else []
        if run_time is not None:
            timing += ["-t", run_time]
        self.master = self._spawn(
            "master",
            [
                "--master",
                "--headless",
                "--expect-workers",
                str(workers),
                "--master-bind-host",
                self.master_host,
                "--master-bind-port",
                str(self.master_port),
                "--host",
                self.host,
                "--results-dir",
                str(self.results_root),
                "--run-id",
                self.run_id,
                "--only-summary",
                *timing,
                *args,
                *tokenize_flag(args, tokenize),
            ],
            prefix,
            env,
        )
        return self.master

    def start_worker(self, *args: str, prefix: Sequence[str] = (), env: dict[str, str] | None = None) -> Proc:
        proc = self._spawn(
            f"worker{len(self.workers)}",
            [
                "--worker",
                "--master-host",
                self.master_host,
                "--master-port",
                str(self.master_port),
                "--results-dir",
                str(self.results_root),
                *args,
            ],
            prefix,
            env,
        )
        self.workers.append(proc)
        return proc

    def worker_name(self, proc: Proc, timeout_s: float = 60) -> str:
        """``worker-N``, the name the master gave ``proc``: from the records file it opened."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and proc.popen.poll() is None:
            with contextlib.suppress(psutil.Error):
                for f in psutil.Process(proc.popen.pid).open_files():
                    name = Path(f.path).name
                    if name.startswith("requests-worker-"):
                        return name.removeprefix("requests-").removesuffix(".jsonl")
            time.sleep(0.1)
        raise AssertionError(f"{proc.name} opened no records file:\n{proc.output()[-3000:]}")

    def wait_master(self, timeout_s: float) -> int:
        assert self.master is not None
        try:
            return self.master.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the master did not exit within {timeout_s} s:\n{self.master.output()[-4000:]}"
            ) from None

    def wait_workers(self, timeout_s: float) -> list[int | None]:
        deadline = time.monotonic() + timeout_s
        for p in self.workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(max(0.1, deadline - time.monotonic()))
        return [p.popen.poll() for p in self.workers]

    def stop_all(self) -> None:
        for p in self.procs():
            if p.popen.poll() is None:
                p.kill(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for p in self.procs():
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill(signal.SIGKILL)
                p.popen.wait(5)
            p._file.close()

    # -- results ----------------------------------------------------------------------------------

    @property
    def summary(self) -> dict[str, Any]:
        return read_checked(self.results / "summary.json")

    def record_files(self) -> list[Path]:
        return sorted(self.results.glob("requests-*.jsonl"))

    def records(self) -> dict[str, list[dict[str, Any]]]:
        """Per-request records by worker name (``worker-0``...)."""
        return {p.stem.removeprefix("requests-"): read_jsonl(p) for p in self.record_files()}
