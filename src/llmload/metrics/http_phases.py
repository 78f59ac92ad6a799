"""Where a request's time went before its first token: the HTTP phases, per request and per stage.

From the transport's stamps on the record (``record.py``), in order:

- ``pool_wait``: handed to the transport until it had a connection to use (its connect
  started, or its request was sent on a kept-alive one): a pool's queue, and the client's own
  work before the send;
- ``tcp_connect`` and ``tls``: a new connection's TCP connect (name lookup included) and its
  TLS handshake; absent when a kept-alive connection was reused;
- ``request_write``: the request's bytes handed to the socket;
- ``first_byte``: written until the first response byte was read: the server (and any gateway
  before it) accepting the request;
- ``first_token``: the first response byte until the first token: for a streaming server, which
  sends its head at once, the prefill and its queue.

``request_write + first_byte + first_token`` is TTFT exactly; the phases before it are outside
TTFT (it starts at the send), which is why they are reported apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.core.record import RequestRecord
from llmload.metrics.derive import gap
from llmload.metrics.histogram import LogHistogram, fill

PHASES = ("pool_wait", "tcp_connect", "tls", "request_write", "first_byte", "first_token")


def phases_ns(r: RequestRecord) -> tuple[int | None, ...]:
    """The record's phases in ``PHASES`` order; None where the transport did not see one."""
    acquired = r.connect_start_ns if r.connect_start_ns is not None else r.sent_ns
    tcp_end = r.tls_start_ns if r.tls_start_ns is not None else r.connected_ns
    return (
        gap(r.began_ns, acquired),
        gap(r.connect_start_ns, tcp_end),
        gap(r.tls_start_ns, r.connected_ns),
        gap(r.sent_ns, r.written_ns),
        gap(r.written_ns, r.first_byte_ns),
        gap(r.first_byte_ns, r.first_token_ns),
    )


@dataclass(slots=True)
class HttpPhases:
    """A stage's phases over its measured requests that succeeded, mergeable like its stats."""

    requests: int = 0
    new_connections: int = 0  # of them, requests that opened a connection of their own
    hist: dict[str, LogHistogram] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every histogram present, on a new accumulator and on one read back from a message or
        # file that carried fewer (metrics/wire.py): the merge reads each by name.
        fill(self.hist, PHASES)

    def add(self, r: RequestRecord) -> None:
        self.requests += 1
        if r.connect_start_ns is not None:
            self.new_connections += 1
        for name, value in zip(PHASES, phases_ns(r), strict=True):
            if value is not None:
                self.hist[name].add(max(value, 0))

    def merge(self, other: HttpPhases) -> None:
        self.requests += other.requests
        self.new_connections += other.new_connections
        for name in PHASES:
            self.hist[name].merge(other.hist[name])
