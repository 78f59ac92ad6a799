"""A raw HTTP/1.1 server far ahead of its client: every response is pre-rendered and written at once.

    python bench/harness/blaster.py EVENTS   # prints its port, serves until killed

Any request (POST /v1/chat/completions included) gets the same streamed chat completion of
``EVENTS`` token events, rendered by the simulator's own ``ChunkRenderer`` with continuous usage
(what llmload asks for), each event its own HTTP chunk as servers send them, then the usage
event, ``[DONE]`` and the last chunk. The response costs this process one ``sendall``, so its
client reads whatever the socket holds (64 KiB, ~200 events) every time: the "many events per
read" regime. A thread per connection, stdlib only; it never imports gevent.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

from llmload.sim.render import DONE_EVENT, LAST_CHUNK, VOCABULARY_BYTES, ChunkRenderer, frame

_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
    b"x-request-id: chatcmpl-blast\r\n\r\n"
)


def render(events: int) -> bytes:
    r = ChunkRenderer(
        chat=True,
        response_id="chatcmpl-blast",
        created=1764445000,
        model="sim-llama-3-8b",
        prompt_tokens=134,
        continuous_usage=True,
        emit_timestamps=False,
    )
    pieces = [_HEAD, frame(r.role(0))]
    for i in range(1, events + 1):
        word = VOCABULARY_BYTES[i % len(VOCABULARY_BYTES)]
        pieces.append(frame(r.text(word, "length" if i == events else None, i, 0)))
    pieces += [frame(r.usage(events, 0) + DONE_EVENT), LAST_CHUNK]
    return b"".join(pieces)


def _serve_connection(conn: socket.socket, response: bytes) -> None:
    # A benchmark ends by dropping its connections: a reset is the end, not an error.
    with contextlib.suppress(OSError), conn:
        _serve(conn, response)


def read_request(conn: socket.socket, buffer: bytes) -> tuple[bytes, bytes] | None:
    """The next request's head (its body read and dropped) and what follows it in ``buffer``;
    None when the client closed. Enough HTTP for a benchmark's stdlib server."""
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(buffer) < length:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    return head, buffer[length:]


def _serve(conn: socket.socket, response: bytes) -> None:
    buffer = b""
    while (request := read_request(conn, buffer)) is not None:
        buffer = request[1]
        conn.sendall(response)


@contextlib.contextmanager
def running(events: int, pin: list[str]) -> Iterator[str]:
    """A blaster process serving ``events``-event responses, as its URL; ``pin`` is a taskset
    prefix that takes the pid (``results.cpu_pinning``), empty for none."""
    server = subprocess.Popen([sys.executable, __file__, str(events)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}"
        if pin:
            subprocess.run([*pin, str(server.pid)], check=True, capture_output=True)
        yield url
    finally:
        server.kill()
        server.wait()


def main() -> None:
    response = render(int(sys.argv[1]))
    listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_connection, args=(conn, response), daemon=True).start()


if __name__ == "__main__":
    main()
