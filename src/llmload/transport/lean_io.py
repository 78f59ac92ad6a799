"""What the lean transport needs from gevent sockets: connecting, deadlines, TLS reads.

Split from ``lean.py`` (which frames and delivers) so each stays one concept; these functions
know sockets and gevent, nothing of HTTP.
"""

from __future__ import annotations

import socket
from time import perf_counter_ns
from typing import Final

import gevent
import gevent.socket

from llmload.errors import ErrorKind
from llmload.transport.base import ResponseSink, TransportFailure

READ_SIZE: Final = 65536


def open_connection(host: str, port: int, timeout_s: float) -> socket.socket:
    """A connected socket (gevent's: it has the stdlib socket's methods, and is the stdlib's
    once Locust has patched the process). An IP address is connected directly: ``create_connection`` would
    resolve it on gevent's resolver threads, ten of them, and a ramp of 1,000 users queued there
    for seconds, each waiting greenlet holding ~3 KB (bench/memory.py)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        sock: socket.socket = gevent.socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout_s)
            sock.connect((host, port))
        except BaseException:
            sock.close()
            raise
        return sock
    connected: socket.socket = gevent.socket.create_connection((host, port), timeout=timeout_s)
    return connected


class ReadDeadline:
    """The sink's read deadline as one timer per response. gevent builds a ``Timeout`` for every
    blocking read of a socket with a timeout (~1.7 µs and ~3 KB per waiting stream); this timer
    fires at the deadline as computed when armed, and the read it interrupts re-arms it from
    the sink (reads since may have moved a stall deadline) or gives up."""

    __slots__ = ("_sink", "timer")

    def __init__(self, sink: ResponseSink) -> None:
        self._sink = sink
        self.timer: gevent.Timeout | None = None
        self.arm()

    def arm(self) -> None:
        self.close()
        deadline_ns = self._sink.read_deadline_ns()
        if deadline_ns is None:
            return
        left_ns = deadline_ns - perf_counter_ns()
        if left_ns <= 0:
            raise TransportFailure(ErrorKind.STALL_TIMEOUT, "read deadline passed")
        self.timer = gevent.Timeout.start_new(left_ns / 1e9)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.close()
            self.timer = None


def apply_deadline(sock: socket.socket, sink: ResponseSink) -> None:
    deadline_ns = sink.read_deadline_ns()
    if deadline_ns is None:
        sock.settimeout(None)
        return
    left_ns = deadline_ns - perf_counter_ns()
    if left_ns <= 0:
        raise TransportFailure(ErrorKind.STALL_TIMEOUT, "read deadline passed")
    sock.settimeout(left_ns / 1e9)


def take_arrived_records(sock: socket.socket, data: bytes) -> bytes:
    """Add the TLS records that had already arrived to the one ``recv`` returned.

    A TLS ``recv`` returns one record, and servers write one record per event: without this, a
    client that read late would see each queued event as its own read, and "events per read"
    would hide exactly the lateness it exists to show. With it, a read means what it means in
    plaintext: everything that had arrived, stamped when the read returned.
    """
    pieces = [data]
    size = len(data)
    sock.settimeout(0.0)
    try:
        while size < READ_SIZE:
            more = sock.recv(READ_SIZE - size)
            if not more:
                break  # EOF: the next blocking recv sees it again
            pieces.append(more)
            size += len(more)
    except OSError:  # SSLWantReadError: nothing more has arrived; a real error recurs next read
        pass
    finally:
        sock.settimeout(None)  # back to blocking: the response's deadline is its own timer
    return data if len(pieces) == 1 else b"".join(pieces)
