"""The default hot path: HTTP/1.1 on one keep-alive gevent socket per user.

Each ``recv`` is stamped with ``perf_counter_ns()`` the moment it returns, framed by the sans-I/O
``ResponseParser``, and handed to the sink in one ``on_data`` call: the timestamp belongs to the
read, never to a byte count or a line. Sockets come from ``gevent.socket`` explicitly
(``lean_io``), so this works cooperatively under Locust (monkey-patched) and in a plain process
(tests, benchmarks) alike.
"""

from __future__ import annotations

import socket
import ssl
from time import perf_counter_ns
from typing import Final

import gevent

from llmload.errors import ErrorKind
from llmload.protocol.http1 import HttpFramingError, ResponseParser, render_request
from llmload.protocol.origin import Origin
from llmload.transport.base import HttpRequest, ResponseSink, StaleConnection, TransportFailure
from llmload.transport.delivery import STOPPED, Delivery, at_eof, deliver, read_failed
from llmload.transport.lean_io import (
    READ_SIZE,
    ReadDeadline,
    apply_deadline,
    open_connection,
    take_arrived_records,
)

# After the core has what it wants ([DONE]), the body's last bytes (the terminating chunk) are
# usually in the same read or a few microseconds behind it. Waiting this long for them keeps the
# connection reusable; a server slower than that costs us a new connection, not a stall.
TAIL_GRACE_NS: Final = 100_000_000


class LeanTransport:
    """One user's connection to one origin. Not shared between greenlets."""

    def __init__(
        self,
        origin: Origin,
        *,
        connect_timeout_s: float,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if origin.tls and ssl_context is None:
            raise ValueError(f"{origin.base_url} needs an SSL context")
        self._origin = origin
        self._connect_timeout_s = connect_timeout_s
        self._ssl_context = ssl_context if origin.tls else None
        self._sock: socket.socket | None = None  # the idle keep-alive connection, if any

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                self._attempt(sock, request, sink, reused=True)
                return
            except StaleConnection:
                # Not a request retry: the server closed this idle connection (its keep-alive
                # timeout) before reading our request, so the request never reached it. Every
                # HTTP client replays on a fresh connection here; the sink hears on_connect and
                # on_sent again, and the new values replace the stale attempt's.
                pass
        sock = self._connect(sink)
        self._attempt(sock, request, sink, reused=False)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    # -- one attempt on one connection -----------------------------------------------------------

    def _attempt(
        self, sock: socket.socket, request: HttpRequest, sink: ResponseSink, *, reused: bool
    ) -> None:
        reusable = False
        origin = self._origin
        try:
            # Rendered per attempt and dropped once written: held by ``exchange`` for a replay,
            # it would cost 1 KB per in-flight stream for as long as the response streams.
            payload = render_request(request, origin.host_header, path_prefix=origin.path_prefix)
            self._send(sock, payload, sink, reused=reused)
            del payload
            reusable = self._receive(sock, ResponseParser(request.method), sink, reused=reused)
        finally:
            # Also on GreenletExit or gevent.Timeout from above: a connection in an unknown state
            # is closed, never kept and never leaked.
            if reusable:
                self._sock = sock
            else:
                sock.close()

    def _send(self, sock: socket.socket, payload: bytes, sink: ResponseSink, *, reused: bool) -> None:
        apply_deadline(sock, sink)
        sink.on_sent(perf_counter_ns())
        try:
            sock.sendall(payload)
            sink.on_written(perf_counter_ns())
        except TimeoutError as exc:
            raise TransportFailure(ErrorKind.STALL_TIMEOUT, "request write timed out") from exc
        except OSError as exc:  # reset, broken pipe, TLS alert
            if reused:
                raise StaleConnection(str(exc)) from exc
            raise TransportFailure(ErrorKind.CONNECT_ERROR, f"request not sent: {exc}") from exc

    def _receive(
        self, sock: socket.socket, parser: ResponseParser, sink: ResponseSink, *, reused: bool
    ) -> bool:
        """Deliver the response; return whether the connection may be reused."""
        sock.settimeout(None)  # the deadline is one timer for the response, not one per read
        deadline = ReadDeadline(sink)
        try:
            if self._ssl_context is None:
                ended = Delivery(sock, parser, sink, reused=reused).wait(deadline)
            else:
                ended = _receive_tls(sock, parser, sink, deadline, reused=reused)
        finally:
            deadline.close()
        return _drain_tail(sock, parser) if ended is STOPPED else bool(ended)

    # -- connecting ------------------------------------------------------------------------------

    def _connect(self, sink: ResponseSink) -> socket.socket:
        origin = self._origin
        start_ns = perf_counter_ns()
        try:
            sock = open_connection(origin.host, origin.port, self._connect_timeout_s)
        except TimeoutError as exc:
            raise TransportFailure(ErrorKind.CONNECT_TIMEOUT, f"connect: {exc}") from exc
        except OSError as exc:  # refused, unreachable, DNS failure (socket.gaierror)
            raise TransportFailure(ErrorKind.CONNECT_ERROR, f"connect: {exc}") from exc
        tls_start_ns = None
        try:
            # Requests are written in one sendall; Nagle would only delay the next request.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._ssl_context is not None:
                tls_start_ns = perf_counter_ns()
                sock = self._handshake(sock, self._ssl_context, start_ns)
        except BaseException:
            sock.close()
            raise
        sink.on_connect(start_ns, perf_counter_ns(), tls_start_ns)
        return sock

    def _handshake(self, sock: socket.socket, ctx: ssl.SSLContext, start_ns: int) -> ssl.SSLSocket:
        # The connect timeout bounds TCP connect and TLS handshake together.
        left_s = self._connect_timeout_s - (perf_counter_ns() - start_ns) / 1e9
        sock.settimeout(max(left_s, 0.001))
        try:
            return ctx.wrap_socket(sock, server_hostname=self._origin.host)
        except TimeoutError as exc:
            raise TransportFailure(ErrorKind.CONNECT_TIMEOUT, f"TLS handshake: {exc}") from exc
        except OSError as exc:  # ssl.SSLError (verification failed, ...), reset
            raise TransportFailure(ErrorKind.CONNECT_ERROR, f"TLS handshake: {exc}") from exc


def _receive_tls(
    sock: socket.socket, parser: ResponseParser, sink: ResponseSink, deadline: ReadDeadline, *, reused: bool
) -> bool | str:
    """The TLS path, read in the user's greenlet: a TLS socket can hold decrypted bytes while
    its descriptor is not readable, so a readability callback (``Delivery``) could miss them."""
    first = True
    while True:
        try:
            data = sock.recv(READ_SIZE)
        except gevent.Timeout as fired:
            if fired is not deadline.timer:
                raise
            deadline.arm()  # reads since it was armed may have moved it; or it passed
            continue
        except OSError as exc:  # reset, TLS error mid-stream
            raise read_failed(exc, parser, reused=reused) from exc
        t_ns = perf_counter_ns()
        if not data:
            return at_eof(parser, sink, t_ns, reused=reused)
        if first:
            first = False
            sink.on_first_byte(t_ns)
        ended = deliver(parser, sink, t_ns, take_arrived_records(sock, data))
        if ended is not None:
            return ended
        # Not kept while waiting for the next read: a read far behind the server holds up to
        # 64 KiB, twice (raw and de-chunked), per stream.
        del data


def _drain_tail(sock: socket.socket, parser: ResponseParser) -> bool:
    """Read what is left of the framing for a short grace; True if the connection is reusable.

    The sink wants no more body, so nothing read here is delivered. Bytes that are not there
    within the grace cost the connection, not a wait.
    """
    give_up_ns = perf_counter_ns() + TAIL_GRACE_NS
    while not parser.complete:
        left_ns = give_up_ns - perf_counter_ns()
        if left_ns <= 0:
            return False
        sock.settimeout(left_ns / 1e9)
        try:
            data = sock.recv(READ_SIZE)
            parser.feed(data)
        except (OSError, HttpFramingError):  # timeout, reset, garbage: just drop the connection
            return False
        if not data:
            return False
    return parser.reusable
