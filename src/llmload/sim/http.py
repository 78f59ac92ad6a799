"""A small HTTP/1.1 server protocol: requests with Content-Length bodies, keep-alive, pipelining.

Hand-written on ``asyncio.Protocol`` because the simulator must never be the bottleneck: a
framework adds tens of microseconds per request and, worse, per streamed write. One connection
serves one request at a time; pipelined requests wait in the buffer until the response ends.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, cast

from llmload.sim.truth import Truth

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024

REASONS: Mapping[int, str] = MappingProxyType(
    {
        100: "Continue",
        200: "OK",
        400: "Bad Request",
        401: "Unauthorized",
        404: "Not Found",
        405: "Method Not Allowed",
        413: "Content Too Large",
        429: "Too Many Requests",
        431: "Request Header Fields Too Large",
        500: "Internal Server Error",
        501: "Not Implemented",
        503: "Service Unavailable",
    }
)


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One parsed request. Header names are lower-case."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    arrival_ns: int  # perf_counter_ns of the read that completed the request
    keep_alive: bool


def response_head(
    status: int,
    headers: list[tuple[str, str]],
    *,
    content_length: int | None,
    keep_alive: bool,
) -> bytes:
    """A response's status line and headers; chunked when ``content_length`` is None."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if content_length is None:
        lines.append("transfer-encoding: chunked")
    else:
        lines.append(f"content-length: {content_length}")
    if not keep_alive:
        lines.append("connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Exchange(Protocol):
    """A response in progress, told when its client goes away."""

    def on_disconnect(self) -> None: ...


class Handler(Protocol):
    def __call__(self, request: HttpRequest, conn: HttpConnection) -> None: ...


class _Malformed(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """Request line and headers; raise ``_Malformed``."""
    try:
        text = head.decode("latin-1")
        request_line, *header_lines = text.split("\r\n")
        method, target, version = request_line.split(" ")
    except ValueError:
        raise _Malformed(400, "malformed request line") from None
    if not version.startswith("HTTP/1."):
        raise _Malformed(400, "only HTTP/1.x is served")
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise _Malformed(400, "malformed header line")
        headers[name.lower()] = value.strip()
    return method, target, version, headers


def _keep_alive(version: str, headers: dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


class HttpConnection(asyncio.Protocol):
    """One client connection: parses requests and hands each to the handler in turn."""

    def __init__(self, handler: Handler, truth: Truth) -> None:
        self._handler = handler
        self._truth = truth
        self._buffer = bytearray()
        self._busy = False  # a response is in progress
        self._keep_alive = True
        self._continue_sent = False
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self.peer = "?"
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        self._truth.connections_total += 1
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple):
            self.peer = f"{peer[0]}:{peer[1]}"

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter_ns()
        self._buffer += data
        if not self._busy:
            self._next_request(now)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        exchange, self.exchange = self.exchange, None
        if exchange is not None:
            exchange.on_disconnect()

    def _next_request(self, now: int) -> None:
        """Parse one complete request from the buffer, if there is one, and dispatch it."""
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                self._reject(431, "request head too large")
            return
        try:
            method, target, version, headers = _parse_head(bytes(self._buffer[:end]))
            length = self._body_length(headers)
        except _Malformed as exc:
            self._reject(exc.status, str(exc))
            return
        start = end + 4
        if len(self._buffer) < start + length:
            self._maybe_continue(headers)
            return
        body = bytes(self._buffer[start : start + length])
        del self._buffer[: start + length]
        self._continue_sent = False
        self._busy = True
        self._keep_alive = _keep_alive(version, headers)
        path, _, query = target.partition("?")
        request = HttpRequest(method, path, query, headers, body, now, self._keep_alive)
        self._handler(request, self)

    def _body_length(self, headers: dict[str, str]) -> int:
        if "transfer-encoding" in headers:
            raise _Malformed(501, "chunked request bodies are not served; send Content-Length")
        raw = headers.get("content-length", "0")
        if not raw.isdigit():
            raise _Malformed(400, "bad content-length")
        length = int(raw)
        if length > MAX_BODY_BYTES:
            raise _Malformed(413, "request body too large")
        return length

    def _maybe_continue(self, headers: dict[str, str]) -> None:
        # curl waits a second for this before sending a large body.
        if headers.get("expect", "").lower() == "100-continue" and not self._continue_sent:
            self._continue_sent = True
            self.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _reject(self, status: int, message: str) -> None:
        body = message.encode()
        head = response_head(
            status, [("content-type", "text/plain")], content_length=len(body), keep_alive=False
        )
        self.write(head + body)
        self.close()

    # --- what a handler does with the connection -------------------------------------------

    def write(self, data: bytes) -> None:
        if not self.closed and self.transport is not None:
            self.transport.write(data)

    def respond(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """A complete response with a Content-Length body; the exchange ends."""
        head = response_head(status, headers, content_length=len(body), keep_alive=self._keep_alive)
        self.write(head + body)
        self.finish()

    def finish(self) -> None:
        """The response is complete: serve the next request, or close."""
        self.exchange = None
        self._busy = False
        if not self._keep_alive:
            self.close()
        elif self._buffer and not self.closed:
            self._next_request(time.perf_counter_ns())

    def close(self) -> None:
        """Close after the written bytes are sent (FIN)."""
        self.exchange = None
        if self.transport is not None and not self.closed:
            self.transport.close()

    def reset(self) -> None:
        """Abort with a TCP RST: SO_LINGER 0 makes close() discard and reset."""
        self.exchange = None
        if self.transport is None or self.closed:
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()
