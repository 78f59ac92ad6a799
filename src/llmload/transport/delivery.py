"""One plaintext response received in the event loop's own callbacks, not in the user's greenlet.

A greenlet blocked on its socket costs two switches and gevent's waiting machinery for every
read: the hub switches to it when the socket turns readable, it reads, and it switches back to
wait again. With one event per read (many streams at a realistic pace), that is about a fifth
of what a bare gevent client spends per event (bench/capacity.py: the floors). Here the loop
calls ``Delivery`` itself when the socket is readable: it reads, stamps, frames and hands the
bytes to the sink right there, and the user's greenlet, waiting for the response as a whole,
is woken once, when it ends. The stamp is taken the moment ``recv`` returns, as before.

Everything this callback calls runs inside the hub, so it must never block: ``recv`` on the
socket's non-blocking descriptor, the sans-I/O parser and the sink (``ResponseRecorder``, which
does no I/O). An exception is carried to the waiting greenlet and raised there.
"""

from __future__ import annotations

import socket
from time import perf_counter_ns
from typing import Final

import gevent
from gevent.hub import Waiter

from llmload.errors import ErrorKind
from llmload.protocol.http1 import HttpFramingError, ResponseParser
from llmload.transport.base import ResponseSink, StaleConnection, TransportFailure
from llmload.transport.lean_io import READ_SIZE, ReadDeadline

# The response went on past what the sink wanted ([DONE]): what is left of its framing is
# drained by the caller (``lean._drain_tail``), as on a TLS connection.
STOPPED: Final = "stopped"


class Delivery:
    """Receives one response on ``sock``; ``wait`` returns whether the connection may be
    reused, or ``STOPPED``."""

    __slots__ = ("_first", "_parser", "_recv", "_reused", "_sink", "_waiter", "_watcher")

    def __init__(
        self, sock: socket.socket, parser: ResponseParser, sink: ResponseSink, *, reused: bool
    ) -> None:
        # gevent's socket tries the syscall and, on EAGAIN, waits: a wait inside the hub would
        # deadlock it. Its descriptor underneath is non-blocking, and this callback only runs
        # once the loop saw it readable.
        raw: socket.socket = sock._sock  # type: ignore[attr-defined]
        self._recv = raw.recv
        self._parser = parser
        self._sink = sink
        self._reused = reused
        self._first = True
        hub = gevent.get_hub()
        self._waiter = Waiter(hub)
        self._watcher = hub.loop.io(sock.fileno(), 1)  # 1: readable

    def wait(self, deadline: ReadDeadline) -> bool | str:
        self._watcher.start(self._on_readable)
        try:
            while True:
                try:
                    ended: bool | str = self._waiter.get()
                    return ended
                except gevent.Timeout as fired:
                    if fired is not deadline.timer:
                        raise
                    deadline.arm()  # reads since it was armed may have moved it; or it passed
        finally:
            self._watcher.close()

    def _on_readable(self) -> None:
        try:
            ended = self._read()
        except BaseException as exc:  # noqa: BLE001 (not swallowed: raised in the waiting greenlet)
            self._watcher.stop()
            self._waiter.throw(exc)
            return
        if ended is not None:
            self._watcher.stop()
            self._waiter.switch(ended)

    def _read(self) -> bool | str | None:
        """One read; what the response ended as, or None while it goes on."""
        parser, sink = self._parser, self._sink
        try:
            data = self._recv(READ_SIZE)
        except BlockingIOError:
            return None  # readable, then drained by nobody else: spurious, wait again
        except OSError as exc:  # reset
            raise read_failed(exc, parser, reused=self._reused) from exc
        t_ns = perf_counter_ns()
        if not data:
            return at_eof(parser, sink, t_ns, reused=self._reused)
        if self._first:
            self._first = False
            sink.on_first_byte(t_ns)
        return deliver(parser, sink, t_ns, data)


def at_eof(parser: ResponseParser, sink: ResponseSink, t_ns: int, *, reused: bool) -> bool:
    if reused and not parser.started:
        raise StaleConnection("closed before any response byte")
    if parser.feed_eof():
        sink.on_end(t_ns)  # a close-delimited body ends here
        return False
    where = "response head" if parser.head is None else "body"
    raise TransportFailure(ErrorKind.STREAM_BROKEN, f"connection closed inside the {where}")


def deliver(parser: ResponseParser, sink: ResponseSink, t_ns: int, data: bytes) -> bool | str | None:
    """Frame one read and hand it to the sink; what the response ended as, or None while it
    goes on (both read paths: ``Delivery`` here, TLS in ``lean``)."""
    body = parser.whole_chunk(data)
    if body is not None:  # most reads of paced streams: one whole chunk, nothing else to do
        return STOPPED if sink.on_data(t_ns, body) else None
    try:
        parsed = parser.feed(data)
    except HttpFramingError as exc:
        raise TransportFailure(ErrorKind.BAD_PAYLOAD, str(exc)) from exc
    head = parsed.head
    if head is not None:
        sink.on_headers(t_ns, head.status, head.headers)
    if parsed.body and sink.on_data(t_ns, parsed.body):
        return STOPPED  # the core has what it wants ([DONE]): it hears nothing more
    if parsed.complete:
        sink.on_end(t_ns)
        return parser.reusable
    return None


def read_failed(exc: OSError, parser: ResponseParser, *, reused: bool) -> Exception:
    """A read's error as the transport raises it: a kept connection the server had closed
    before answering is stale (the request is replayed), anything else broke the stream."""
    if reused and not parser.started:
        return StaleConnection(str(exc))
    return TransportFailure(ErrorKind.STREAM_BROKEN, f"read failed: {exc}")
