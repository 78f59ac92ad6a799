"""Start and stop the server under test for ``llmload tune``.

A ``command`` runs through ``/bin/sh`` in a session of its own, its output appended to its log:
a Ctrl+C at the terminal reaches only tune, which stops the server after the sweep has written
its results, and stopping signals the whole process group, so a wrapper script cannot leave its
server running. A ``start`` hook runs to its end (``kubectl apply``, ``helm upgrade``) and the
``stop`` hook undoes it; such a server lives elsewhere, so there is no process to watch.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

_TAIL_BYTES = 3000
_HOOK_TIMEOUT_S = 1800.0  # a helm upgrade that pulls images can take many minutes


def free_port() -> int:
    """A port nothing listens on now, for a server about to start on this machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, limit: int = _TAIL_BYTES) -> str:
    """The end of a log, for the record of a configuration that failed."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - limit))
            return f.read().decode("utf-8", errors="replace").replace("\r", "\n").strip()
    except OSError:
        return ""


class HookFailed(Exception):
    """A start hook exited non-zero: the configuration has no server to measure."""

    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(f"the start hook exited with {code}")


def _hook(command: str, log: Path, cwd: Path) -> int:
    with log.open("ab") as out:
        out.write(f"$ {command}\n".encode())
        out.flush()
        try:
            return subprocess.run(
                ["/bin/sh", "-c", command],
                check=False,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=_HOOK_TIMEOUT_S,
            ).returncode
        except subprocess.TimeoutExpired:
            return -int(signal.SIGKILL)


@dataclass
class Server:
    """One configuration's server, from start to stop."""

    url: str
    log: Path
    process: subprocess.Popen[bytes] | None = None  # None: the start hook's server, elsewhere
    stop_hook: str | None = None
    cwd: Path = Path(".")

    def exit_code(self) -> int | None:
        """The child's exit status once it has exited; None while it runs (or for a hook's)."""
        return None if self.process is None else self.process.poll()

    def stop(self, grace_s: float) -> int | None:
        """SIGTERM to the process group, SIGKILL after ``grace_s``; or the stop hook. Returns the
        child's exit status (None for a hook's server)."""
        if self.process is None:
            if self.stop_hook:
                _hook(self.stop_hook, self.log, self.cwd)
            return None
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)  # what the server left behind in its group
        return self.process.returncode

    def _signal(self, signum: int) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)


def start(
    url: str, log: Path, cwd: Path, *, command: str | None, start_hook: str | None, stop_hook: str | None
) -> Server:
    """Run ``command`` as a child (or the start hook to its end, raising ``HookFailed``)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    if command is None:
        code = _hook(start_hook or "", log, cwd)
        if code != 0:
            raise HookFailed(code)
        return Server(url, log, None, stop_hook, cwd)
    with log.open("ab") as out:
        out.write(f"$ {command}\n".encode())
        out.flush()
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Server(url, log, process, stop_hook, cwd)
