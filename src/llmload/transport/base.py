"""The seam between transports (sockets, httpx) and the sans-I/O measurement core.

A transport moves bytes and stamps the clock; it knows nothing of SSE, tokens or metrics. It
reports what happens to one request through a ``ResponseSink``, which the core implements.

Contract every transport keeps, so that every metric means the same whatever carried it:

- ``on_data`` is called once per socket read that yielded body bytes, with every body byte that
  read completed (de-chunked) and the ``perf_counter_ns()`` taken right after the read returned.
  Reads never wait for a byte count: whatever the socket has is delivered at once.
- ``on_connect`` is called only when a new connection was opened for this request. If a reused
  keep-alive connection turns out to have been closed by the server before any response byte,
  the transport replays the request once on a new connection (the request never reached the
  server): ``on_connect`` and ``on_sent`` then come again, before ``on_headers``, and the later
  values replace the earlier ones.
- ``on_written`` follows ``on_sent`` once the request's last byte was handed to the socket, and
  ``on_first_byte`` comes with the first read of any response byte (before ``on_headers``):
  with ``on_connect``'s stamps they are the request's HTTP phases. A transport that cannot see
  a moment (httpx over HTTP/2 hides some) does not call its method.
- Before each read the transport asks ``read_deadline_ns()`` and gives up at that time with
  ``TransportFailure(ErrorKind.STALL_TIMEOUT)``; the core re-classifies timeouts (first token,
  stall, total) because only it knows which deadline was the binding one.
- After ``on_data`` returns ``True`` the transport stops reading and considers the response done
  (the core saw ``[DONE]``); the sink hears nothing more of it, not even ``on_end``. The
  connection is reused only when the body ended cleanly.
- Failures are raised as ``TransportFailure`` with an ``ErrorKind``; nothing else is raised for
  anything the peer does.
"""

from __future__ import annotations

from typing import Protocol

from llmload.errors import ErrorKind
from llmload.protocol.http1 import HttpRequest

__all__ = ["HttpRequest", "ResponseSink", "StaleConnection", "Transport", "TransportFailure"]


class TransportFailure(Exception):
    """A request failed in transport; ``kind`` is what the client observed."""

    def __init__(self, kind: ErrorKind, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind.value}: {detail}")


class StaleConnection(Exception):
    """A reused connection failed before any response byte: the server had closed it idle, so
    the request never reached it and a transport replays it once on a new connection."""


class ResponseSink(Protocol):
    """What a transport tells the core about one exchange, in this order."""

    def on_connect(self, start_ns: int, connected_ns: int, tls_start_ns: int | None = None) -> None:
        """A new connection: TCP from ``start_ns``, TLS (if any) from ``tls_start_ns``."""

    def on_sent(self, sent_ns: int) -> None: ...

    def on_written(self, t_ns: int) -> None: ...

    def on_first_byte(self, t_ns: int) -> None: ...

    def on_headers(self, t_ns: int, status: int, headers: dict[str, str]) -> None:
        """Header names are lower-cased."""

    def on_data(self, t_ns: int, data: bytes) -> bool:
        """Body bytes of one read; return True when no more body is wanted."""

    def on_end(self, t_ns: int) -> None:
        """The body ended as its framing said (last chunk, content-length, or close)."""

    def read_deadline_ns(self) -> int | None:
        """Absolute ``perf_counter_ns`` by which the next read must return, or None."""


class Transport(Protocol):
    """Sends requests to one origin and feeds the responses to sinks."""

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        """Send ``request`` and deliver its response to ``sink``; raise ``TransportFailure``."""

    def close(self) -> None: ...
