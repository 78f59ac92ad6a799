"""The floor under any gevent client: the same streams, each read only counted, nothing parsed.

    python bench/harness/gevent_floor.py URL STREAMS WARMUP_S MEASURE_S MAX_TOKENS OUT.json [naive|callback]

``STREAMS`` greenlets each keep one streamed chat request in flight on a keep-alive gevent
socket, closed loop, and do nothing per read but ``recv`` and count the events in it
(``bytes.count``): the event loop's own cost per read, which llmload's worker pays too.
Reads wait for the socket to turn readable first after a read that did not fill the buffer, as
llmload's lean transport does (``transport/lean_io.WaitFirst``); ``naive`` reads the way a plain
gevent client does, ``sock.recv`` alone, which tries the syscall first and waits only after it
fails. ``callback`` reads in the event loop's own callbacks, the greenlet woken once per
response (``transport/delivery.py`` does the same): the floor of that design, below the others
by the two greenlet switches a read costs them.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402  (after patching)
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import gevent  # noqa: E402
from gevent.hub import Waiter  # noqa: E402


def stream(host: str, port: int, request: bytes, counts: list[int], naive: bool) -> None:
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    hub = gevent.get_hub()
    readable = hub.loop.io(sock.fileno(), 1)
    while True:
        sock.sendall(request)
        dry = not naive
        while True:  # the simulator ends each response with [DONE] and the last chunk
            if dry:
                hub.wait(readable)
            data = sock.recv(65536)
            dry = not naive and len(data) < 65536
            if not data:
                return
            counts[0] += data.count(b"data: ")
            counts[1] += 1
            if data.endswith(b"0\r\n\r\n"):
                break


def stream_in_callbacks(host: str, port: int, request: bytes, counts: list[int]) -> None:
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    recv = sock._sock.recv  # type: ignore[attr-defined]  # the non-blocking descriptor beneath
    hub = gevent.get_hub()
    readable = hub.loop.io(sock.fileno(), 1)
    while True:
        sock.sendall(request)
        waiter = Waiter(hub)

        def on_readable(waiter: Waiter = waiter) -> None:
            try:
                data = recv(65536)
            except BlockingIOError:
                return
            if data:
                counts[0] += data.count(b"data: ")
                counts[1] += 1
            if not data or data.endswith(b"0\r\n\r\n"):
                readable.stop()
                waiter.switch(bool(data))

        readable.start(on_readable)
        if not waiter.get():
            return


def main() -> None:
    url, streams, warmup, measure, max_tokens, out = sys.argv[1:7]
    mode = (sys.argv[7:8] or ["wait-first"])[0]
    naive = mode == "naive"
    parts = urlsplit(url)
    body = json.dumps(
        {
            "model": "sim",
            "messages": [{"role": "user", "content": "w " * 128}],
            "max_tokens": int(max_tokens),
            "stream": True,
            "ignore_eos": True,
        }
    ).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
    )
    counts = [0, 0]  # events, reads
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    for _ in range(int(streams)):
        if mode == "callback":
            gevent.spawn(stream_in_callbacks, host, port, request, counts)
        else:
            gevent.spawn(stream, host, port, request, counts, naive)
    gevent.sleep(float(warmup))
    cpu0, events0, reads0 = time.process_time(), counts[0], counts[1]
    gevent.sleep(float(measure))
    cpu1, events1, reads1 = time.process_time(), counts[0], counts[1]
    with open(out, "w") as f:
        json.dump(
            {
                "client": f"gevent-floor-{mode}",
                "cpu_window_s": cpu1 - cpu0,
                "events": events1 - events0,
                "reads": reads1 - reads0,
            },
            f,
        )


if __name__ == "__main__":
    main()
