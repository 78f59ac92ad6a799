"""A scripted raw-socket HTTP/1.1 server on 127.0.0.1, for tests that need exact bytes on the wire.

Plain ``socket`` and ``threading`` (no gevent, no asyncio), so it serves a gevent-using test in
the same process and never depends on the code under test. For each request it reads (head and
Content-Length body), it plays a script of actions: send bytes (whole, or one write per byte),
sleep, close, or reset (RST via ``SO_LINGER`` 0). A connection the script leaves open reads the
next request (keep-alive). It counts accepted connections, keeps every request it read, and
stamps every write with ``perf_counter_ns()`` taken just before it, so a test in the same process
can compare its own read stamps with the moment the bytes left.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType


@dataclass(frozen=True)
class Send:
    data: bytes


@dataclass(frozen=True)
class SendBytewise:
    """One write per byte, ``gap_s`` apart: 1-byte writes, a slow drip."""

    data: bytes
    gap_s: float


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Close:
    """An orderly close (FIN)."""


@dataclass(frozen=True)
class Reset:
    """An abortive close: RST instead of FIN."""


Action = Send | SendBytewise | Sleep | Close | Reset
Script = Sequence[Action] | Callable[[int], Sequence[Action]]  # by request number, from 0


def chunked_head(status: int = 200, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status} OK\r\nContent-Type: text/event-stream\r\n"
        f"Transfer-Encoding: chunked\r\n{extra}\r\n"
    ).encode()


def chunk(data: bytes, extension: str = "") -> bytes:
    return b"%x%s\r\n%s\r\n" % (len(data), extension.encode(), data)


LAST_CHUNK = b"0\r\n\r\n"


class RawServer:
    """Serve ``script`` on 127.0.0.1 (TLS when ``tls`` is a server context) until stopped."""

    def __init__(self, script: Script, *, tls: ssl.SSLContext | None = None) -> None:
        self._script = script
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._threads: list[threading.Thread] = []  # one per connection
        self.connections = 0
        self.requests: list[bytes] = []
        self.writes: list[tuple[int, bytes]] = []  # (perf_counter_ns just before, bytes)

    @property
    def url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    def __enter__(self) -> RawServer:
        self._acceptor.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping.set()
        self._acceptor.join(5.0)
        self._listener.close()
        self.wait_idle(5.0)

    def wait_idle(self, timeout_s: float = 5.0) -> bool:
        """Wait until every connection thread has ended (and closed its socket)."""
        give_up = time.monotonic() + timeout_s
        for thread in list(self._threads):
            thread.join(max(0.0, give_up - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10.0)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
            buffer = bytearray()
            while self._serve_one(conn, buffer):
                pass
        except OSError:  # ssl.SSLError included
            pass  # the client went away or refused our certificate: that is the test's business
        finally:
            conn.close()

    def _serve_one(self, conn: socket.socket, buffer: bytearray) -> bool:
        """Read one request and play its script; False when the connection is done."""
        request = _read_request(conn, buffer)
        if request is None:
            return False
        with self._lock:
            number = len(self.requests)
            self.requests.append(request)
        actions = self._script(number) if callable(self._script) else self._script
        for action in actions:
            if isinstance(action, Send):
                self._write(conn, action.data)
            elif isinstance(action, SendBytewise):
                for i in range(len(action.data)):
                    self._write(conn, action.data[i : i + 1])
                    time.sleep(action.gap_s)
            elif isinstance(action, Sleep):
                time.sleep(action.seconds)
            elif isinstance(action, Reset):
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return False
            else:
                return False
        return True

    def _write(self, conn: socket.socket, data: bytes) -> None:
        t_ns = time.perf_counter_ns()
        conn.sendall(data)
        with self._lock:
            self.writes.append((t_ns, data))


def _read_request(conn: socket.socket, buffer: bytearray) -> bytes | None:
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    head_end = buffer.index(b"\r\n\r\n") + 4
    length = 0
    for line in bytes(buffer[:head_end]).split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(buffer) < head_end + length:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    request = bytes(buffer[: head_end + length])
    del buffer[: head_end + length]
    return request
