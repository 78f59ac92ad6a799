"""Raw HTTP/1.1 over plain sockets, for tests that must see exactly what the simulator sent.

No HTTP library here on purpose: a library would hide the faults these tests look for (bad chunk
sizes, a missing last chunk, a reset). Responses are read whole, until the framing says they end,
the peer closes or resets, or a timeout.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any


def request_bytes(
    path: str,
    body: dict[str, Any] | None = None,
    *,
    method: str | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    raw = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method or ('GET' if body is None else 'POST')} {path} HTTP/1.1", "host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines += ["content-type: application/json", f"content-length: {len(raw)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + raw


def chat_body(max_tokens: int = 8, *, stream: bool = True, words: int = 4, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "sim",
        "messages": [{"role": "user", "content": " ".join(["hello"] * words)}],
        "max_tokens": max_tokens,
        "ignore_eos": True,
        "stream": stream,
    }
    body.update(extra)
    return body


@dataclass
class Response:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""  # everything read, head included
    body: bytes = b""  # de-chunked body (as far as the framing was valid)
    complete: bool = False  # the framing said the body ended
    end: str = ""  # "complete", "eof", "reset" or "timeout"
    framing_error: str | None = None
    reads: list[tuple[int, bytes]] = field(default_factory=list)  # (perf_counter_ns, bytes)

    def events(self) -> list[str]:
        """SSE event payloads (the text after "data: ") of the de-chunked body."""
        out = []
        for block in self.body.decode(errors="replace").split("\n\n"):
            for line in block.split("\n"):
                if line.startswith("data: "):
                    out.append(line[6:])
        return out

    def chunks(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.events() if e != "[DONE]"]

    def lines(self) -> list[str]:
        return [line for line in self.body.decode(errors="replace").split("\n") if line]


def _parse_head(raw: bytes, response: Response) -> int:
    """Fill status and headers; return the offset of the body, or -1 if incomplete."""
    end = raw.find(b"\r\n\r\n")
    while end >= 0 and raw.startswith(b"HTTP/1.1 100"):
        raw = raw[end + 4 :]
        end = raw.find(b"\r\n\r\n")
    if end < 0:
        return -1
    status_line, *lines = raw[:end].decode("latin-1").split("\r\n")
    response.status = int(status_line.split(" ")[1])
    response.headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines)}
    return len(response.raw) - len(raw) + end + 4


def _dechunk(data: bytes, response: Response) -> bool:
    """De-chunk ``data`` into ``response.body``; True when the last chunk was seen."""
    body = bytearray()
    pos = 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            break
        size_text = data[pos:eol].split(b";")[0]
        try:
            size = int(size_text, 16)
        except ValueError:
            response.framing_error = f"bad chunk size {size_text!r}"
            break
        if size == 0:
            response.body = bytes(body)
            return data.find(b"\r\n", eol + 2) >= 0
        if len(data) < eol + 2 + size + 2:
            body += data[eol + 2 : eol + 2 + size]
            break
        body += data[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2
    response.body = bytes(body)
    return False


def _update(response: Response) -> bool:
    """Re-parse what was read; True when the response is complete."""
    start = _parse_head(response.raw, response)
    if start < 0:
        return False
    data = response.raw[start:]
    if response.headers.get("transfer-encoding") == "chunked":
        return _dechunk(data, response)
    length = int(response.headers.get("content-length", "-1"))
    response.body = data if length < 0 else data[:length]
    return 0 <= length <= len(data)


def read_response(sock: socket.socket, timeout_s: float = 5.0) -> Response:
    """Read one response from ``sock``, stamping every read."""
    response = Response()
    deadline = time.monotonic() + timeout_s
    while True:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except TimeoutError:
            response.end = "timeout"
            return response
        except ConnectionResetError:
            response.end = "reset"
            return response
        now = time.perf_counter_ns()
        if not data:
            response.end = "eof"
            return response
        response.reads.append((now, data))
        response.raw += data
        if _update(response):
            response.complete = True
            response.end = "complete"
            return response
        if response.framing_error:
            response.end = "framing"
            return response


def connect(port: int, timeout_s: float = 5.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(
    port: int,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    headers: dict[str, str] | None = None,
    timeout_s: float = 5.0,
    method: str | None = None,
) -> Response:
    """One request on a fresh connection."""
    with connect(port) as sock:
        sock.sendall(request_bytes(path, body, headers=headers, method=method))
        return read_response(sock, timeout_s)
