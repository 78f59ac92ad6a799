"""HTTP/1.1 client framing, sans-I/O: render a request, parse a response fed in arbitrary pieces.

``ResponseParser.feed(bytes)`` returns what those bytes completed: the final status line and
headers (once), the de-chunked body bytes, and whether the body's framing has ended. Any split
of a byte stream, down to one byte per feed, yields the same head and the same body bytes.

This runs once per socket read on the hot path: a 64 KiB read holding hundreds of small chunks is
framed with ``bytes.find`` and slicing, one loop iteration per chunk when the chunk is whole,
never a Python loop per byte. Malformed framing raises ``HttpFramingError``; a transport maps it
to ``ErrorKind.BAD_PAYLOAD``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple

MAX_HEAD_BYTES: Final = 64 * 1024
MAX_CHUNK_LINE_BYTES: Final = 8 * 1024  # a size line with extensions; real ones are < 100 B
MAX_TRAILER_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request, ready to be written. ``headers`` excludes Host and Content-Length.

    Defined with the framing that renders it; transports take it from here (``transport.base``
    re-exports it), so the protocol never imports a transport.
    """

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


_HEX: Final = b"0123456789abcdefABCDEF"
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
_FRAMING_HEADERS: Final = frozenset({"host", "content-length", "transfer-encoding"})

# Parser states.
_HEAD, _SIZE, _DATA, _DATA_END, _TRAILER, _LENGTH, _CLOSE, _DONE = range(8)


class HttpFramingError(ValueError):
    """The bytes are not a well-framed HTTP/1.x response."""


class ResponseHead(NamedTuple):
    status: int
    reason: str
    version: str  # "HTTP/1.1" or "HTTP/1.0"
    headers: dict[str, str]  # names lower-cased; repeated fields joined with ", "


class Parsed(NamedTuple):
    """What one ``feed`` completed."""

    head: ResponseHead | None  # the final (non-1xx) head, in the feed that completed it only
    body: bytes  # de-chunked body bytes, possibly empty
    complete: bool  # the body's framing has ended (last chunk, content-length reached)


_NOTHING: Final = Parsed(None, b"", False)
_new_parsed = tuple.__new__  # once per read: skips the NamedTuple's Python-level __new__


class ResponseParser:
    """Frames one response. Make one per request; ``method`` matters only for HEAD."""

    def __init__(self, method: str = "GET") -> None:
        self._no_body = method == "HEAD"
        self._state = _HEAD
        self._head_buf = bytearray()
        self._scanned = 0  # head bytes already searched for the blank line
        self._pending = b""  # an incomplete chunk-size, CRLF or trailer line
        self._remaining = 0  # bytes left in the current chunk or content-length body
        self._trailer_bytes = 0
        self._sizes: dict[bytes, int] = {}  # chunk-size line -> size
        self._keep_alive = False
        self._excess = False  # bytes after the end of the response
        self.head: ResponseHead | None = None
        self.started = False  # any byte received

    @property
    def complete(self) -> bool:
        return self._state == _DONE

    @property
    def reusable(self) -> bool:
        """The response ended cleanly and the connection may carry another request."""
        return self._state == _DONE and self._keep_alive and not self._excess

    def whole_chunk(self, data: bytes) -> bytes | None:
        """The chunk's data when ``data`` is exactly one whole chunk of a size seen before,
        between chunks (one event per read, many streams at a realistic pace): what ``feed``
        would return as the body, with nothing else looked at. None: call ``feed``."""
        if self._state != _SIZE or self._pending:
            return None
        eol = data.find(b"\n")
        size = self._sizes.get(data[:eol]) if eol > 0 else None
        if size and eol + size + 3 == len(data) and data.endswith(b"\r\n"):
            return data[eol + 1 : -2]  # ``started`` is already set: a size was seen
        return None

    def feed(self, data: bytes) -> Parsed:
        state = self._state
        if not data:
            return _NOTHING
        self.started = True
        head = None
        if state == _HEAD:
            head, data = self._feed_head(data)
            if head is None:
                return _NOTHING
            state = self._state
        if _SIZE <= state <= _TRAILER:  # the chunked states are numbered together
            body = self._feed_chunked(data) if data else b""
        elif state == _LENGTH:
            body = self._feed_length(data)
        elif state == _CLOSE:
            body = data
        else:
            self._excess = self._excess or bool(data)
            body = b""
        return _new_parsed(Parsed, (head, body, self._state == _DONE))

    def feed_eof(self) -> bool:
        """The peer closed the connection. True when that (or earlier bytes) ended the body."""
        self._keep_alive = False
        if self._state == _CLOSE:
            self._state = _DONE
        return self._state == _DONE

    # -- head ------------------------------------------------------------------------------------

    def _feed_head(self, data: bytes) -> tuple[ResponseHead | None, bytes]:
        buf = self._head_buf
        buf += data
        while True:
            if len(buf) >= 5 and not buf.startswith(b"HTTP/"):
                raise HttpFramingError(f"not an HTTP response: {bytes(buf[:40])!r}")
            end = _head_end(buf, max(0, self._scanned - 2))
            if end < 0:
                self._scanned = len(buf)
                if len(buf) > MAX_HEAD_BYTES:
                    raise HttpFramingError("response head over 64 KiB")
                return None, b""
            if end > MAX_HEAD_BYTES:
                raise HttpFramingError("response head over 64 KiB")
            head = _parse_head(bytes(buf[:end]))
            del buf[:end]
            self._scanned = 0
            if 100 <= head.status < 200:
                if head.status == 101:
                    raise HttpFramingError("101 Switching Protocols was not asked for")
                continue  # an interim response (100 Continue, 103 Early Hints): no body
            rest = bytes(buf)
            buf.clear()
            self._set_framing(head)
            self.head = head
            return head, rest

    def _set_framing(self, head: ResponseHead) -> None:
        headers = head.headers
        connection = headers.get("connection", "").lower()
        self._keep_alive = head.version == "HTTP/1.1" and "close" not in _tokens(connection)
        te = headers.get("transfer-encoding")
        if self._no_body or head.status in (204, 304):
            self._state = _DONE
        elif te is not None:
            # RFC 9112 6.3: Transfer-Encoding overrides Content-Length; a final coding other
            # than chunked means the body runs to the close.
            if _tokens(te.lower())[-1:] == ["chunked"]:
                self._state = _SIZE
            else:
                self._state = _CLOSE
                self._keep_alive = False
        elif "content-length" in headers:
            self._remaining = _content_length(headers["content-length"])
            self._state = _LENGTH if self._remaining else _DONE
        else:
            self._state = _CLOSE
            self._keep_alive = False

    # -- bodies ----------------------------------------------------------------------------------

    def _feed_length(self, data: bytes) -> bytes:
        remaining = self._remaining
        if len(data) < remaining:
            self._remaining = remaining - len(data)
            return data
        self._remaining = 0
        self._state = _DONE
        if len(data) > remaining:
            self._excess = True
            return data[:remaining]
        return data

    def _feed_chunked(self, data: bytes) -> bytes:
        if self._pending:
            data = self._pending + data
            self._pending = b""
        out: list[bytes] = []
        sizes = self._sizes
        pos = 0
        end = len(data)
        while pos < end:
            state = self._state
            if state == _SIZE:
                eol = data.find(b"\n", pos)
                if eol < 0:
                    self._pending = _keep_line(data[pos:], MAX_CHUNK_LINE_BYTES, "chunk-size line")
                    break
                line = data[pos:eol]  # events repeat a few sizes: a dict hit, not a parse
                size = sizes.get(line)
                if size is None:
                    size = _chunk_size(line)
                    if len(sizes) < 32:  # bounded, against a hostile server
                        sizes[line] = size
                pos = eol + 1
                stop = pos + size
                if size and stop + 2 <= end and data[stop] == 13 and data[stop + 1] == 10:
                    out.append(data[pos:stop])  # the common case: the whole chunk is here
                    pos = stop + 2
                else:
                    self._state = _DATA if size else _TRAILER
                    self._remaining = size
            elif state == _DATA:
                pos = self._chunk_data(data, pos, out)
            elif state == _DATA_END:
                pos = self._chunk_end(data, pos)
            elif state == _TRAILER:
                pos = self._trailer_line(data, pos)
            else:  # _DONE: what follows is not this response's
                self._excess = True
                break
        return out[0] if len(out) == 1 else b"".join(out)

    def _chunk_data(self, data: bytes, pos: int, out: list[bytes]) -> int:
        stop = pos + self._remaining
        if stop > len(data):
            out.append(data[pos:])
            self._remaining = stop - len(data)
            return len(data)
        out.append(data[pos:stop])
        self._remaining = 0
        self._state = _DATA_END
        return stop

    def _chunk_end(self, data: bytes, pos: int) -> int:
        if data.startswith(b"\r\n", pos):
            pos += 2
        elif data.startswith(b"\n", pos):
            pos += 1
        elif pos + 1 == len(data) and data[pos] == 13:
            self._pending = b"\r"  # the LF is in the next read
            return len(data)
        else:
            raise HttpFramingError(f"no CRLF after chunk data: {data[pos : pos + 8]!r}")
        self._state = _SIZE
        return pos

    def _trailer_line(self, data: bytes, pos: int) -> int:
        eol = data.find(b"\n", pos)
        if eol < 0:
            self._pending = _keep_line(data[pos:], MAX_TRAILER_BYTES, "trailer line")
            return len(data)
        if eol == pos or (eol == pos + 1 and data[pos] == 13):
            self._state = _DONE
            return eol + 1
        self._trailer_bytes += eol - pos  # trailers carry nothing we measure
        if self._trailer_bytes > MAX_TRAILER_BYTES:
            raise HttpFramingError("trailers over 64 KiB")
        return eol + 1


def _head_end(buf: bytearray, start: int) -> int:
    """The index just past the blank line ending the head, or -1. Bare LF is tolerated."""
    crlf = buf.find(b"\n\r\n", start)
    lf = buf.find(b"\n\n", start)
    if crlf < 0:
        return -1 if lf < 0 else lf + 2
    if lf < 0 or crlf < lf:
        return crlf + 3
    return lf + 2


def _parse_head(raw: bytes) -> ResponseHead:
    lines = raw.split(b"\n")
    parts = lines[0].rstrip(b"\r").split(b" ", 2)
    version = parts[0]
    if version not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise HttpFramingError(f"bad status line: {lines[0][:80]!r}")
    code = parts[1] if len(parts) > 1 else b""
    if len(code) != 3 or not code.isdigit():
        raise HttpFramingError(f"bad status code: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    last = ""
    for raw_line in lines[1:]:
        line = raw_line.rstrip(b"\r")
        if not line:
            continue
        if line[0] in b" \t" and last:
            # obs-fold: RFC 9112 5.2 says a client replaces it with a space.
            headers[last] += " " + line.strip(b" \t").decode("latin-1")
            continue
        colon = line.find(b":")
        if colon <= 0:
            raise HttpFramingError(f"bad header line: {line[:80]!r}")
        name = line[:colon].strip().decode("latin-1").lower()
        value = line[colon + 1 :].strip(b" \t").decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        last = name
    reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
    return ResponseHead(int(code), reason, version.decode(), headers)


def _tokens(value: str) -> list[str]:
    return [t.strip() for t in value.split(",") if t.strip()]


def _content_length(value: str) -> int:
    # A repeated but identical Content-Length ("5, 5") is allowed by RFC 9110 8.6.
    values = set(_tokens(value))
    if len(values) != 1:
        raise HttpFramingError(f"bad content-length: {value!r}")
    (digits,) = values
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
        raise HttpFramingError(f"bad content-length: {value!r}")
    return int(digits)


def _chunk_size(line: bytes) -> int:
    semi = line.find(b";")  # chunk extensions (";name=value") carry nothing we use
    digits = (line if semi < 0 else line[:semi]).strip(b" \t\r")
    # int(x, 16) alone would also take "0x1f", "+1f", "1_f": only bare hex digits are framing.
    if not digits or len(digits) > 16 or digits.translate(None, _HEX):
        raise HttpFramingError(f"bad chunk size: {line[:40]!r}")
    return int(digits, 16)


def _keep_line(partial: bytes, limit: int, what: str) -> bytes:
    if len(partial) > limit:
        raise HttpFramingError(f"{what} over {limit} bytes")
    return partial


def _check_header(name: str, value: str) -> str:
    lower = name.lower()
    bad_name = not name or any(c in name for c in ": \t\r\n\0")
    if lower in _FRAMING_HEADERS or bad_name or any(c in value for c in "\r\n\0"):
        raise ValueError(f"header not allowed in an HttpRequest: {name!r}")
    return lower


def render_request(request: HttpRequest, host_header: str, *, path_prefix: str = "") -> bytes:
    """The bytes of ``request``; ``path_prefix`` (from the base URL) goes before its path.

    Adds Host, Content-Length (when there is a body or the method expects one) and
    ``Accept-Encoding: identity`` unless the request names an encoding: transports deliver raw
    body bytes, and a compressed SSE stream would reach the decoder as garbage.
    """
    target = path_prefix + request.path
    if not request.method.isalpha() or not target.startswith("/") or " " in target:
        raise ValueError(f"bad request line: {request.method} {target!r}")
    lines = [f"{request.method} {target} HTTP/1.1", f"Host: {host_header}"]
    named_encoding = False
    for name, value in request.headers:
        named_encoding = _check_header(name, value) == "accept-encoding" or named_encoding
        lines.append(f"{name}: {value}")
    if request.body or request.method in _BODY_METHODS:
        lines.append(f"Content-Length: {len(request.body)}")
    if not named_encoding:
        lines.append("Accept-Encoding: identity")
    lines.append("\r\n")
    return "\r\n".join(lines).encode("latin-1") + request.body
