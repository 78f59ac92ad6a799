"""The model-loading act: a startup delay with a growing log, and the hang mode.

A client's readiness wait must tell "still loading" (the log grows, ``/health`` answers 503) from
"stuck" (connections are accepted, nothing answers, the log stops). ``--startup-delay-s`` plays the
first, ``--hang`` the second.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO

LOG_INTERVAL_S = 0.5


class Startup:
    """Knows when the simulated model is loaded, and writes the log that says how far it is."""

    def __init__(self, delay_s: float, hang: bool, log: IO[str] | None) -> None:
        self._delay_ns = int(delay_s * 1e9)
        self._hang = hang
        self._start_ns = time.perf_counter_ns()
        self._log = log

    def is_ready(self) -> bool:
        if self._hang:
            return False
        return time.perf_counter_ns() - self._start_ns >= self._delay_ns

    def log(self, line: str) -> None:
        if self._log is not None:
            self._log.write(f"{time.strftime('%H:%M:%S')} {line}\n")
            self._log.flush()  # whoever watches the log must see it grow line by line

    async def run(self, url: str) -> None:
        """Write loading progress until ready (or, hanging, write once and fall silent)."""
        self.log(f"llmload sim starting: will listen on {url}")
        if self._hang:
            self.log("loading weights ... 0%")
            return
        while not self.is_ready():
            elapsed = time.perf_counter_ns() - self._start_ns
            self.log(f"loading weights ... {min(99, elapsed * 100 // self._delay_ns)}%")
            # Wake at the moment of readiness too, so "ready" is logged when /health turns 200.
            await asyncio.sleep(min(LOG_INTERVAL_S, (self._delay_ns - elapsed) / 1e9))
        self.log("loading weights ... 100%")
        self.log(f"ready: serving on {url}")

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
