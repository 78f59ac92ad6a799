"""llmload's worker, measured for memory (gevent-patched first, as under Locust).

    python bench/harness/memory_proc.py per-stream URL STREAMS SETTLE_S TRACE(0|1) OUT.json
    python bench/harness/memory_proc.py slope URL STREAMS SECONDS MAX_TOKENS OUT.json
    python bench/harness/memory_proc.py floor - STREAMS - - OUT.json

``per-stream``: RSS (and, with TRACE, ``tracemalloc``'s Python allocations) before any stream
and once every stream is in flight and ``SETTLE_S`` into its response; the difference divided by
the streams in flight is the cost of one in-flight stream: its greenlet, socket, transport,
recorder, record and its per-event arrays so far. ``slope``: RSS once a second under constant
closed-loop load, for a least-squares slope. ``floor``: what any gevent client pays per stream,
llmload or not: a bare greenlet blocked in ``recv`` (with a timeout, as every client sets one)
on a connected socket that received one event.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import gc  # noqa: E402  (after patching, as Locust does)
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import gevent.socket  # noqa: E402
import psutil  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.llmload_client import Worker, make_session  # noqa: E402


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


def per_stream(url: str, streams: int, settle_s: float, trace: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session(url, streams, 100_000, Path(tmp))  # no request ends meanwhile
        worker = Worker(session, streams)
        gevent.sleep(0.5)  # the session's own greenlets are up
        gc.collect()
        if trace:
            tracemalloc.start()
        rss0 = rss()
        traced0 = tracemalloc.get_traced_memory()[0] if trace else 0
        worker.start(stagger_s=1.0)
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
            and sum(1 for r in list(session.active) if r.first_token_ns is not None) < streams
        ):
            gevent.sleep(0.2)
        gevent.sleep(settle_s)
        gc.collect()
        active = list(session.active)
        rss1 = rss()
        traced1 = tracemalloc.get_traced_memory()[0] if trace else 0
        events = sum(len(r.event_ns) for r in active)
        if trace:
            tracemalloc.stop()
        in_flight = len(active)
        worker._stop = True
        gevent.killall(list(worker._greenlets), block=True, timeout=10)
        session.close()
    return {
        "streams_in_flight": in_flight,
        "token_events_per_stream": round(events / max(in_flight, 1), 1),
        "rss_bytes_per_stream": round((rss1 - rss0) / max(in_flight, 1)),
        "traced_bytes_per_stream": round((traced1 - traced0) / max(in_flight, 1)) if trace else None,
        "array_bytes_per_stream": round(16 * events / max(in_flight, 1)),
    }


def slope(url: str, streams: int, seconds: float, max_tokens: int) -> dict[str, Any]:
    samples: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session(url, streams, max_tokens, Path(tmp))
        worker = Worker(session, streams)
        worker.start(stagger_s=1.0)
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            gevent.sleep(1.0 - (time.monotonic() - start) % 1.0)
            samples.append((round(time.monotonic() - start, 3), rss()))
        records = session.records.count
        worker.stop()
        session.close()
    return {"samples": samples, "records": records}


def floor(streams: int) -> dict[str, Any]:
    pairs = [gevent.socket.socketpair() for _ in range(streams)]

    def reader(sock: Any) -> None:
        sock.settimeout(120.0)
        while sock.recv(65536):
            pass

    gc.collect()
    rss0 = rss()
    readers = [gevent.spawn(reader, a) for a, _ in pairs]
    gevent.sleep(0.5)
    for _, b in pairs:
        b.send(b"x" * 300)
    gevent.sleep(0.5)
    gc.collect()
    per_stream = round((rss() - rss0) / streams)
    gevent.killall(readers)
    for a, b in pairs:
        a.close()
        b.close()
    return {"rss_bytes_per_blocked_greenlet": per_stream}


def main() -> None:
    mode, url, streams, a, b, out = sys.argv[1:7]
    if mode == "per-stream":
        result = per_stream(url, int(streams), float(a), b == "1")
    elif mode == "floor":
        result = floor(int(streams))
    else:
        result = slope(url, int(streams), float(a), int(b))
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
