"""Run a ``locust`` child for ``llmload sweep|search|demo`` so that Ctrl+C ends it cleanly.

The child runs in a process group of its own: a Ctrl+C at the terminal reaches only this
parent, which passes exactly one SIGINT (or the SIGTERM it got) on to the child. Locust then
stops its users, writes everything measured and marks the run interrupted; an embedded
simulator, also in a group of its own, is stopped only after the child has exited, so its
death never shows up as request errors. A second Ctrl+C kills the child at once.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType

from llmload.results.exitcodes import ExitCode


def run_child(command: Sequence[str], *, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end, forwarding SIGINT/SIGTERM; ``quiet`` captures its output."""
    out = subprocess.PIPE if quiet else None
    proc = subprocess.Popen(list(command), start_new_session=True, stdout=out, stderr=out, text=True)
    signals: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if signals:
            proc.kill()
            print(
                "llmload: stopped at once: the run's last results may be missing", file=sys.stderr, flush=True
            )
        else:
            proc.send_signal(signum)
        signals.append(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        stdout, stderr = proc.communicate()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    code = proc.returncode
    if code < 0 or (signals and code == 0):  # ended by a signal, or by one before it started
        code = int(ExitCode.INTERRUPTED)
    return subprocess.CompletedProcess(proc.args, code, stdout or "", stderr or "")
