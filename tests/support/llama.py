"""llama.cpp's ``llama-server`` with SmolLM2-135M, for the real-server tier.

``scripts/llama-server.sh`` builds it once into a cache outside the repository (``make test``
builds it in the background, while the tiers that need no server run); here it is only found
(once that build is over), started on 127.0.0.1 with the model, waited for with ``llmload wait``
as a user would, and stopped. Where it was not built the tests skip, and the line says why and
what to run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "llama-server.sh"
# A file that exists while make test builds llama-server in the background (scripts/test.sh).
BUILDING_ENV = "LLMLOAD_LLAMA_BUILDING"
BUILD_WAIT_S = 1200


@dataclass(frozen=True, slots=True)
class LlamaServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


def built() -> tuple[Path, Path]:
    """The binary and the model, or a skip that says how to get them; a build still going on
    is waited for."""
    building = os.environ.get(BUILDING_ENV)
    give_up = time.monotonic() + BUILD_WAIT_S
    while building and Path(building).exists() and time.monotonic() < give_up:
        time.sleep(2)
    env = {**os.environ, "LLMLOAD_LLAMA_NO_BUILD": "1", "PIP": f"{sys.executable} -m pip"}
    proc = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    if proc.returncode != 0:
        pytest.skip(f"llama-server is not built ({proc.stderr.strip()[-300:]}): run scripts/llama-server.sh")
    binary, model = proc.stdout.split()
    return Path(binary), Path(model)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """``llmload wait`` as a user would run it, while watching the server itself: one that dies
    while loading (a binary built for another CPU) fails the test at once, with its exit code and
    log, instead of after the wait's whole timeout."""
    wait = [str(Path(sys.executable).parent / "llmload"), "wait", "--host", url, "--timeout", "120"]
    said = log.with_suffix(".wait.log")  # a file, not a pipe: nobody reads a pipe while we poll
    with said.open("wb") as out:
        waiter = subprocess.Popen([*wait, "--log", str(log)], stdout=out, stderr=subprocess.STDOUT)
    try:
        while waiter.poll() is None:
            if process.poll() is not None:
                raise AssertionError(
                    f"llama-server exited with {process.returncode} while loading: {log.read_text()[-2000:]}"
                )
            time.sleep(0.1)
        assert waiter.returncode == 0, (said.read_text(), log.read_text()[-2000:])
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()


@contextmanager
def llama_server(
    log_dir: Path, *, slots: int = 8, context: int = 8192, threads: int = 1, extra: tuple[str, ...] = ()
) -> Iterator[LlamaServer]:
    """``-np slots`` parallel sequences sharing ``-c context`` tokens (context / slots each);
    ``extra``: more of llama-server's flags."""
    binary, model = built()
    port = _free_port()
    log = log_dir / f"llama-server-{port}.log"
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-t", str(threads), "-np", str(slots), "-c", str(context), "--metrics", "--no-webui", *extra]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, url, log)
        yield LlamaServer(url, process, log)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
