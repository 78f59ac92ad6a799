"""The httpx transport: HTTP/2 and proxies, at several times the lean path's CPU per event.

One ``httpx.Client`` serves every user of a process: building one costs ~20 ms of CPU (CA
bundle), and its pool must be sized to the users or 128 streams meet ``PoolTimeout``
(docs/pitfalls.md). Each user gets an ``HttpxTransport`` over that shared client.

What httpx does not let us see, and what we do instead:

- Socket reads. ``iter_raw`` yields one piece per HTTP/1.1 chunk or HTTP/2 DATA frame, not per
  ``recv``; each piece is stamped when it is yielded and delivered in its own ``on_data``. Several
  events that one read completed therefore get stamps microseconds apart instead of one shared
  stamp, and "events per read" reads lower than under the lean transport.
- New connections. The httpcore ``trace`` extension reports ``connect_tcp``/``start_tls`` only
  when this request opened the connection, which is exactly when ``on_connect`` is due.
- Read deadlines. httpcore takes the read timeout once per request (HTTP/1.1), not per read, so
  it is set from ``read_deadline_ns()`` when the request starts; a tighter deadline that the
  core sets later (the stall limit after the first token) is checked as each piece arrives, so a
  stall is caught when the late piece comes or when the request's read timeout fires, whichever
  is first, not at the deadline itself as under the lean transport.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Mapping
from time import perf_counter_ns

import httpx

from llmload.errors import ErrorKind
from llmload.protocol.origin import Origin
from llmload.transport.base import HttpRequest, ResponseSink, StaleConnection, TransportFailure

_IDENTITY = ("Accept-Encoding", "identity")  # iter_raw hands over the body still encoded


def build_client(
    *,
    ssl_context: ssl.SSLContext,
    pool_size: int,
    connect_timeout_s: float,
    http2: bool = False,
    proxy: str | None = None,
) -> httpx.Client:
    """The one client of a process, shared by all its users."""
    # One INFO line per request from httpx would drown a load test's output.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return httpx.Client(
        verify=ssl_context,
        http2=http2,
        proxy=proxy,
        limits=httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size),
        timeout=httpx.Timeout(connect_timeout_s, read=None, write=None, pool=None),
        follow_redirects=False,
        trust_env=False,  # the run is configured by its options, not by ambient proxy variables
    )


class HttpxTransport:
    """One user's view of the shared client."""

    def __init__(self, client: httpx.Client, origin: Origin, *, connect_timeout_s: float) -> None:
        self._client = client
        self._base_url = origin.base_url
        self._connect_timeout_s = connect_timeout_s

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        headers = list(request.headers)
        if not any(name.lower() == "accept-encoding" for name, _ in headers):
            headers.append(_IDENTITY)
        try:
            self._attempt(request, headers, sink, replay_if_stale=True)
        except StaleConnection:
            # Not a request retry: httpcore drops idle connections the server closed, but not one
            # whose close was still in flight when it was reused; the request never reached the
            # server. Replayed once, as the lean transport does (see its exchange).
            self._attempt(request, headers, sink, replay_if_stale=False)

    def _attempt(
        self,
        request: HttpRequest,
        headers: list[tuple[str, str]],
        sink: ResponseSink,
        *,
        replay_if_stale: bool,
    ) -> None:
        trace = _Trace(sink)
        try:
            with self._client.stream(
                request.method,
                self._base_url + request.path,
                headers=headers,
                content=request.body,
                timeout=self._timeout(sink),
                extensions={"trace": trace},
            ) as response:
                t_ns = perf_counter_ns()
                trace.responded = True
                sink.on_headers(t_ns, response.status_code, dict(response.headers.items()))
                _stream_body(response, sink)
        except httpx.TransportError as exc:
            if replay_if_stale and _stale(exc, trace):
                raise StaleConnection(str(exc)) from exc
            kind = _kind(exc)
            if kind is None:
                raise  # our own misuse of httpx (bad URL, local protocol error): a bug
            raise TransportFailure(kind, f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        """The client is shared: the factory closes it, not a user."""

    def _timeout(self, sink: ResponseSink) -> httpx.Timeout:
        deadline_ns = sink.read_deadline_ns()
        if deadline_ns is None:
            return httpx.Timeout(self._connect_timeout_s, read=None, write=None, pool=None)
        left_s = (deadline_ns - perf_counter_ns()) / 1e9
        if left_s <= 0:
            raise TransportFailure(ErrorKind.STALL_TIMEOUT, "read deadline passed")
        # A pool wait is client-side queueing, seen by the core as queue time: it may last as
        # long as the request may, and never less than a connect may.
        return httpx.Timeout(
            self._connect_timeout_s,
            read=left_s,
            write=left_s,
            pool=max(left_s, self._connect_timeout_s),
        )


def _stream_body(response: httpx.Response, sink: ResponseSink) -> None:
    for piece in response.iter_raw():
        t_ns = perf_counter_ns()
        if not piece:
            continue
        if sink.on_data(t_ns, piece):
            return  # [DONE]: leaving the block closes the response (and drops a busy connection)
        deadline_ns = sink.read_deadline_ns()
        if deadline_ns is not None and t_ns > deadline_ns:
            raise TransportFailure(ErrorKind.STALL_TIMEOUT, "a read came after its deadline")
    sink.on_end(perf_counter_ns())


class _Trace:
    """httpcore's trace callback: turns its connection and send events into sink calls."""

    __slots__ = (
        "_connect_start_ns",
        "_connected_ns",
        "_sink",
        "_tls_start_ns",
        "new_connection",
        "responded",
    )

    def __init__(self, sink: ResponseSink) -> None:
        self._sink = sink
        self._connect_start_ns: int | None = None
        self._tls_start_ns: int | None = None
        self._connected_ns = 0
        self.new_connection = False
        self.responded = False  # the response head arrived

    def __call__(self, name: str, info: Mapping[str, object]) -> None:
        if name == "connection.connect_tcp.started":
            self._connect_start_ns = perf_counter_ns()
            self.new_connection = True
        elif name == "connection.connect_tcp.complete":
            self._connected_ns = perf_counter_ns()
        elif name == "connection.start_tls.started":
            self._tls_start_ns = perf_counter_ns()
        elif name == "connection.start_tls.complete":
            self._connected_ns = perf_counter_ns()
        elif name.endswith(".send_request_headers.started"):  # http11. or http2.
            now_ns = perf_counter_ns()
            start_ns = self._connect_start_ns
            if start_ns is not None:
                self._connect_start_ns = None
                self._sink.on_connect(start_ns, self._connected_ns or now_ns, self._tls_start_ns)
            self._sink.on_sent(now_ns)
        elif name.endswith(".send_request_body.complete"):
            self._sink.on_written(perf_counter_ns())
        elif name.endswith(".receive_response_headers.complete"):
            # httpcore reads the head whole: its first byte is not seen apart from its end.
            self._sink.on_first_byte(perf_counter_ns())


# Words in httpcore's RemoteProtocolError messages that mean the peer went away mid-response
# (h11: "peer closed connection without sending complete message body", "Server disconnected
# without sending a response."; h2: "Server disconnected", ConnectionTerminated) rather than
# sent something malformed.
_GONE_MARKERS = ("peer closed", "disconnected", "incomplete", "connectionterminated", "reset")


def _stale(exc: httpx.TransportError, trace: _Trace) -> bool:
    """Did a reused connection fail before the response began?"""
    if trace.new_connection or trace.responded:
        return False
    if isinstance(exc, httpx.RemoteProtocolError):
        return "without sending a response" in str(exc)  # h11: EOF before any response byte
    return isinstance(exc, httpx.ReadError | httpx.WriteError)  # reset before the head


def _kind(exc: httpx.TransportError) -> ErrorKind | None:
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return ErrorKind.CONNECT_TIMEOUT
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return ErrorKind.STALL_TIMEOUT
    if isinstance(exc, httpx.ConnectError | httpx.ProxyError | httpx.WriteError):
        return ErrorKind.CONNECT_ERROR  # the request was not sent (TLS failures land here too)
    if isinstance(exc, httpx.ReadError):
        return ErrorKind.STREAM_BROKEN
    if isinstance(exc, httpx.RemoteProtocolError):
        message = str(exc).lower()
        if any(marker in message for marker in _GONE_MARKERS):
            return ErrorKind.STREAM_BROKEN
        # Malformed bytes, whether a bad status line before the headers or bad chunk framing
        # after them: the server's payload is wrong, the connection is not broken.
        return ErrorKind.BAD_PAYLOAD
    return None
