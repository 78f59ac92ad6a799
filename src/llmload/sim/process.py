"""Starting the simulator as a child process, and reading its ground truth over HTTP.

The simulator always runs in its own process (it must never share a loop, or a GIL, with the
client it measures). ``start_sim`` launches ``python -m llmload.sim --port 0 ...``, reads the
announced URL from the first line of its stdout, and drains the rest in a thread: a pipe nobody
drains stalls the child once it fills. Like the server, this module never imports gevent or
Locust, and it talks to the simulator with urllib only (each helper call opens one connection,
which ``connections_total`` counts).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from types import TracebackType
from typing import IO
from urllib.parse import urlsplit

from llmload.errors import SimStartError
from llmload.sim.jsonvalue import JSON

ANNOUNCE_PREFIX = "llmload sim listening on "


def _drain(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        while stream.read(65536):
            pass


class SimProcess:
    """A running simulator child process; a context manager that stops it on exit."""

    def __init__(self, popen: subprocess.Popen[bytes], url: str, stderr: IO[bytes]) -> None:
        self._popen = popen
        self._stderr = stderr
        self._stderr_seen = ""
        assert popen.stdout is not None
        self._drain = threading.Thread(target=_drain, args=(popen.stdout,), daemon=True)
        self._drain.start()
        self.url = url
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 0
        self.pid = popen.pid
        # The helpers trust the simulator's own certificate, whatever signed it.
        self._ssl = ssl._create_unverified_context() if parts.scheme == "https" else None

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def poll(self) -> int | None:
        return self._popen.poll()

    def stop(self, grace_s: float = 5.0) -> int:
        """SIGTERM, wait up to ``grace_s``, then SIGKILL. Returns the exit status."""
        if self._popen.poll() is None:
            self._popen.send_signal(signal.SIGTERM)
            try:
                self._popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()
        self._drain.join(1.0)  # the child is gone: the pipe is at EOF
        if self._popen.stdout is not None:
            self._popen.stdout.close()
        if not self._stderr.closed:
            self._stderr_seen = self.stderr_text()
            self._stderr.close()
        return self._popen.returncode

    def stderr_text(self) -> str:
        """What the simulator wrote to stderr (warnings, tracebacks), also after ``stop``."""
        if self._stderr.closed:
            return self._stderr_seen
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def get(self, path: str, timeout_s: float = 10.0) -> tuple[int, bytes]:
        """GET ``path``; returns (status, body) for any HTTP status."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout_s, context=self._ssl) as r:
                return int(r.status), bytes(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def get_json(self, path: str) -> JSON:
        status, body = self.get(path)
        if status != 200:
            raise RuntimeError(f"GET {path}: HTTP {status}")
        value: JSON = json.loads(body)
        return value

    def _objects(self, path: str) -> list[dict[str, JSON]]:
        found = self.get_json(path)
        if not isinstance(found, list) or not all(isinstance(x, dict) for x in found):
            raise RuntimeError(f"GET {path}: not a list of objects")
        return [x for x in found if isinstance(x, dict)]

    def _object(self, path: str) -> dict[str, JSON]:
        found = self.get_json(path)
        if not isinstance(found, dict):
            raise RuntimeError(f"GET {path}: not an object")
        return found

    def requests(self) -> list[dict[str, JSON]]:
        """Per-request ground truth, in arrival order (``GET /sim/requests``)."""
        return self._objects("/sim/requests")

    def counters(self) -> dict[str, int]:
        return {k: v for k, v in self._object("/sim/counters").items() if isinstance(v, int)}

    def timeline(self, since_ns: int = 0) -> list[tuple[int, int]]:
        """``(t_ns, cumulative tokens written)``, one point per decode step."""
        points = self.get_json(f"/sim/timeline?since_ns={since_ns}")
        return [
            (p[0], p[1])
            for p in (points if isinstance(points, list) else ())
            if isinstance(p, list) and isinstance(p[0], int) and isinstance(p[1], int)
        ]

    def stats(self, since_ns: int = 0) -> dict[str, JSON]:
        """Step lateness and durations, over the steps since ``since_ns``."""
        return self._object(f"/sim/stats?since_ns={since_ns}")

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Poll ``/health`` until 200 (only needed with ``--startup-delay-s``)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if self.get("/health", timeout_s=1.0)[0] == 200:
                    return
            time.sleep(0.05)
        raise TimeoutError(f"{self.url}/health not 200 after {timeout_s} s")


def _read_first_line(popen: subprocess.Popen[bytes], timeout_s: float) -> str:
    assert popen.stdout is not None
    fd = popen.stdout.fileno()
    deadline = time.monotonic() + timeout_s
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise SimStartError(f"no announcement within {timeout_s} s")
        byte = os.read(fd, 1)  # byte by byte: nothing past the first line is consumed here
        if not byte:
            raise SimStartError("the simulator exited before announcing its address")
        line += byte
    return line.decode().strip()


def start_sim(args: Sequence[str] = (), *, timeout_s: float = 15) -> SimProcess:
    """Start ``python -m llmload.sim --port 0 ARGS`` and return once it listens."""
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (owned by the SimProcess, closed by stop)
    command = [sys.executable, "-m", "llmload.sim", "--port", "0", *args]
    # A session of its own: a Ctrl+C at the terminal must not reach the simulator, which is
    # stopped only after the client that measures it (llmload.cli.child).
    popen = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        line = _read_first_line(popen, timeout_s)
        if not line.startswith(ANNOUNCE_PREFIX):
            raise SimStartError(f"unexpected first line {line!r}")
    except SimStartError as exc:
        popen.kill()
        popen.wait()
        if popen.stdout is not None:
            popen.stdout.close()
        stderr.seek(0)
        detail = stderr.read().decode(errors="replace").strip()
        stderr.close()
        raise SimStartError(f"{exc}; command {command}; stderr:\n{detail}") from None
    return SimProcess(popen, line.removeprefix(ANNOUNCE_PREFIX), stderr)
