"""A lean timing probe: many streams on plain non-blocking sockets, every read stamped.

One thread, one ``selectors`` loop, no parsing beyond spotting token-bearing events: the probe
adds as little of its own delay as a Python client can, so what it sees is the simulator's timing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import selectors
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from llmload.sim.priority import request_realtime
from tests.support.wire import chat_body, request_bytes

_TOKEN = b'"content":" '  # a token-bearing chat event (output words start with a space)
_SENT_NS = re.compile(rb'"sent_ns":(\d+)')


@dataclass
class StreamTiming:
    sent_ns: int = 0
    token_reads: list[int] = field(default_factory=list)  # stamps of reads with a token event
    server_sent_ns: list[int] = field(default_factory=list)  # "sent_ns" of each token event
    token_read_of_event: list[int] = field(default_factory=list)  # read stamp of each event
    raw: bytearray = field(default_factory=bytearray)
    done: bool = False

    @property
    def ttft_ns(self) -> int:
        return self.token_reads[0] - self.sent_ns

    def gaps_ns(self) -> list[int]:
        reads = self.token_reads
        return [b - a for a, b in itertools.pairwise(reads)]


def _on_read(timing: StreamTiming, data: bytes, now: int) -> None:
    timing.raw += data
    tokens = data.count(_TOKEN)
    if tokens:
        timing.token_reads.append(now)
        for stamp in _SENT_NS.findall(data)[-tokens:]:
            timing.server_sent_ns.append(int(stamp))
            timing.token_read_of_event.append(now)
    if timing.raw.endswith(b"0\r\n\r\n"):
        timing.done = True


def probe(
    port: int, streams: int, max_tokens: int, *, stagger_s: float = 0.0, timeout_s: float = 30.0
) -> list[StreamTiming]:
    """Open ``streams`` connections, send one streamed chat request on each, time every read.

    ``stagger_s`` spaces the sends (a ramp); all requests are sent before the first token is due.
    """
    selector = selectors.DefaultSelector()
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(streams)]
    timings = [StreamTiming() for _ in socks]
    request = request_bytes("/v1/chat/completions", chat_body(max_tokens))
    try:
        start = time.perf_counter()
        for i, (sock, timing) in enumerate(zip(socks, timings, strict=True)):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            time.sleep(max(0.0, start + i * stagger_s - time.perf_counter()))
            timing.sent_ns = time.perf_counter_ns()
            sock.sendall(request)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, timing)
        deadline = time.monotonic() + timeout_s
        pending = streams
        while pending and time.monotonic() < deadline:
            for key, _ in selector.select(0.5):
                data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                now = time.perf_counter_ns()
                timing = key.data
                if not data:
                    selector.unregister(key.fileobj)
                    pending -= 1
                    continue
                _on_read(timing, data, now)
                if timing.done:
                    selector.unregister(key.fileobj)
                    pending -= 1
    finally:
        selector.close()
        for sock in socks:
            sock.close()
    return timings


def percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.999999) - 1))]


@contextlib.contextmanager
def realtime_thread() -> Iterator[bool]:
    """Run the calling thread at SCHED_FIFO for the block, if permitted; yields whether it is.

    A probe at normal priority on a busy machine measures its own waits for a CPU. It sleeps in
    ``select`` nearly all the time, so claiming the CPU first for a second or two costs little.
    """
    got = request_realtime() is None
    try:
        yield got
    finally:
        if got:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
