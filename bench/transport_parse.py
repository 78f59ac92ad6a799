"""Events per CPU-second through each transport: socket reads, HTTP framing, stamping.

    .venv/bin/python bench/transport_parse.py [--events N] [--requests N] [--smoke]

A raw HTTP/1.1 server in a child process (its CPU is not counted) streams ~250-byte SSE events,
each its own HTTP chunk as real servers send them, in two shapes:

- many per read: the whole response is written at once, so a client read takes up to 64 KiB;
- one per read: events are written one at a time, paced so the client catches up between them
  (the shape of a fast client at low load, where per-read overhead dominates).

The client's CPU time (``time.process_time``) over the exchanges, divided into the events
delivered, gives events per CPU-second; the sink does nothing but count, so this is the
transport's own cost. The process is monkey-patched by gevent first, as under Locust, so httpx
runs on cooperative sockets as it would in a real run.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from typing import Any

_EVENT = (
    b'data: {"id":"chatcmpl-6f1c2d9e","object":"chat.completion.chunk","created":1764445000,'
    b'"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" the"},'
    b'"logprobs":null,"finish_reason":null}],'
    b'"usage":{"prompt_tokens":512,"total_tokens":%d,"completion_tokens":%d}}\n\n'
)
_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_PACE_S = 0.0004  # between events in the one-per-read shape: longer than a client needs per read


def _events(n: int) -> list[bytes]:
    return [_EVENT % (512 + i % 1000, i % 1000) for i in range(1, n + 1)]


# -- the server (child process, no gevent) ----------------------------------------------------------


def serve() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            _serve_connection(conn)


def _serve_connection(conn: socket.socket) -> None:
    # Imported here, in the server process only: the client patches gevent after its imports.
    from harness.blaster import read_request

    buffer = b""
    while (request := read_request(conn, buffer)) is not None:
        head, buffer = request
        _, shape, count = head.split(b" ", 2)[1].split(b"/")  # GET /many/1000 HTTP/1.1
        chunks = [b"%x\r\n%s\r\n" % (len(e), e) for e in _events(int(count))]
        if shape == b"many":
            conn.sendall(_HEAD + b"".join(chunks) + b"0\r\n\r\n")
            continue
        conn.sendall(_HEAD)
        for piece in chunks:
            conn.sendall(piece)
            time.sleep(_PACE_S)
        conn.sendall(b"0\r\n\r\n")


# -- the client ------------------------------------------------------------------------------------


class CountingSink:
    def __init__(self) -> None:
        self.reads = 0
        self.body_bytes = 0

    def on_connect(self, start_ns: int, connected_ns: int, tls_start_ns: int | None = None) -> None:
        pass

    def on_sent(self, sent_ns: int) -> None:
        pass

    def on_written(self, t_ns: int) -> None:
        pass

    def on_first_byte(self, t_ns: int) -> None:
        pass

    def on_headers(self, t_ns: int, status: int, headers: dict[str, str]) -> None:
        pass

    def on_data(self, t_ns: int, data: bytes) -> bool:
        self.reads += 1
        self.body_bytes += len(data)
        return False

    def on_end(self, t_ns: int) -> None:
        pass

    def read_deadline_ns(self) -> int | None:
        return None


def measure(url: str, kind: str, shape: str, events: int, requests: int) -> tuple[float, float]:
    """(events per CPU-second, reads per event) over ``requests`` exchanges."""
    from llmload.transport.base import HttpRequest
    from llmload.transport.factory import TransportConfig, TransportFactory

    factory = TransportFactory(TransportConfig(url, kind=kind))  # type: ignore[arg-type]
    transport = factory.new()
    request = HttpRequest("GET", f"/{shape}/{events}", (), b"")
    transport.exchange(request, CountingSink())  # warm-up: connection, imports, caches
    sink = CountingSink()
    started = time.process_time()
    for _ in range(requests):
        transport.exchange(request, sink)
    cpu_s = time.process_time() - started
    transport.close()
    factory.close()
    expected = sum(len(e) for e in _events(events)) * requests
    if sink.body_bytes != expected:
        raise SystemExit(f"{kind}/{shape}: got {sink.body_bytes} body bytes, expected {expected}")
    total = events * requests
    return total / cpu_s, sink.reads / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=2000, help="events per response")
    parser.add_argument("--requests", type=int, default=20, help="responses per measurement")
    parser.add_argument("--smoke", action="store_true", help="a quick run for CI (< 15 s)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    from gevent import monkey

    monkey.patch_all()  # as Locust does, before anything imports ssl or httpx
    events, requests = (500, 3) if args.smoke else (args.events, args.requests)
    server: Any = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        print(f"{'transport':<10}{'shape':<14}{'events/CPU-s':>14}{'us/event':>10}{'reads/event':>13}")
        for kind in ("lean", "httpx"):
            for shape, n in (("many", events * 5), ("one", events)):
                rate, reads = measure(url, kind, shape, n, requests)
                label = "many/read" if shape == "many" else "one/read"
                print(f"{kind:<10}{label:<14}{rate:>14,.0f}{1e6 / rate:>10.1f}{reads:>13.3f}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
