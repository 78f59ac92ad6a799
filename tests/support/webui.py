"""Driving Locust's web UI from a test: polling until the page's state says so."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(ok: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ok():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
