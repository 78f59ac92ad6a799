"""Every collection of the oldest generation in this process, timed, one JSON line each in
``$GC_PROBE_LOG`` (``bench/gc_pause.py`` puts this folder on ``PYTHONPATH``)."""

import gc
import json
import os
import sys
import time

_LOG = os.environ.get("GC_PROBE_LOG")
_started: list[int] = []


def _timed(phase: str, info: dict[str, int]) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        _started[:] = [time.perf_counter_ns()]  # the clock llmload stamps its windows with
        return
    start = _started[0]
    ms = (time.perf_counter_ns() - start) / 1e6
    line = {"pid": os.getpid(), "program": sys.argv[0] if sys.argv else "", "start_ns": start, "ms": ms}
    with open(_LOG, "a") as log:  # type: ignore[arg-type]  # only with _LOG set
        log.write(json.dumps(line) + "\n")


if _LOG:
    gc.callbacks.append(_timed)
