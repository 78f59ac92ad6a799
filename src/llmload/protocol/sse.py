"""Server-sent events decoding, sans-I/O: ``feed(bytes) -> events``.

Follows the WHATWG EventSource parsing rules (HTML Living Standard, "Parsing an event stream")
with one deliberate deviation, documented on ``SSEDecoder.close``. The decoder sees whatever
bytes one socket read produced, split anywhere (inside a line, inside a CRLF, inside a UTF-8
sequence); any split of a byte stream yields the same events as the whole stream at once.

This is the hot path of every streamed request: the common case (LF line endings, one
``data:`` line per event, many events per read) costs one ``bytes.split`` per read and a few
comparisons per line; there is no per-byte Python loop.
"""

from __future__ import annotations

from typing import Final, NamedTuple

DONE: Final = b"[DONE]"
"""The data of the OpenAI end-of-stream sentinel event."""

DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024

_BOM: Final = b"\xef\xbb\xbf"


class SSEError(ValueError):
    """The byte stream cannot be an SSE stream we are willing to buffer."""


class SSEEvent(NamedTuple):
    """One dispatched event. ``event`` is None for the default ``message`` type."""

    data: bytes
    event: str | None


# Building a NamedTuple through its generated ``__new__`` is a Python-level call; going
# through ``tuple.__new__`` directly is measurably cheaper per event on the hot path.
_new_event = tuple.__new__

# The data of each event a feed completed, and their types when any event had one.
_Decoded = tuple[list[bytes], list[str | None] | None]


def _typed(payloads: list[bytes], types: list[str | None] | None) -> list[SSEEvent]:
    if types is None:
        return [_new_event(SSEEvent, (data, None)) for data in payloads]
    return [_new_event(SSEEvent, pair) for pair in zip(payloads, types, strict=True)]


class SSEDecoder:
    """Incremental decoder for one response body.

    ``data`` values are bytes (JSON parsers take bytes; decoding to str would cost a copy).
    Multi-line data is joined with ``b"\\n"``. ``id:``, ``retry:``, unknown fields and comment
    lines (starting with ``:``) are ignored: llmload never reconnects, so they carry nothing.
    An ``event:`` of ``message`` or empty is reported as None, the default type.
    """

    __slots__ = (
        "_at_start",
        "_buf",
        "_buf_bytes",
        "_cr_pending",
        "_data",
        "_event",
        "_max_line",
        "_more",
        "_more_bytes",
    )

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        """A line, or an event's data lines together, longer than ``max_line_bytes`` raises
        ``SSEError``: a broken or hostile server cannot grow the buffer without end."""
        self._max_line = max_line_bytes
        self._reset()

    def _reset(self) -> None:
        self._buf: list[bytes] = []  # pieces of the incomplete last line, line ends normalised
        self._buf_bytes = 0
        self._cr_pending = False  # the last byte fed was CR: an LF right after it is eaten
        self._at_start = True  # no line completed yet: a leading BOM is still to be dropped
        self._data: bytes | None = None  # the first data line of the pending event
        self._more: list[bytes] | None = None  # further data lines (rare: multi-line data)
        self._more_bytes = 0
        self._event: str | None = None

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode the bytes of one read; return the events that this data completed."""
        return _typed(*self._feed(data))

    def feed_data(self, data: bytes) -> list[bytes]:
        """As ``feed``, but only the data of each event: for a caller that ignores event types
        (the recorder), it saves building a tuple per event on the hot path."""
        one = self.whole_event(data)
        return [one] if one is not None else self._feed(data)[0]

    def whole_event(self, data: bytes) -> bytes | None:
        """The data of ``data`` when it is exactly one whole event and nothing is pending (one
        event per read, many streams at a realistic pace): ``data: X\n\n``, or ``event: T\ndata:
        X\n\n`` (the Responses and Messages APIs), with no other line end decodes to ``X``; the
        type is dropped, as ``feed_data`` drops it. None: call ``feed_data``."""
        if self._data is not None or self._buf or self._cr_pending or 13 in data:
            return None
        start = data.find(10) + 1 if data[:7] == b"event: " else 0
        if (
            data[start : start + 6] == b"data: "
            and data.endswith(b"\n\n")
            and data.find(10, start) == len(data) - 2  # memchr: no LF before the final two
            and len(data) <= self._max_line
        ):
            self._at_start = False
            self._event = None
            return data[start + 6 : -2]
        return None

    def _feed(self, data: bytes) -> _Decoded:
        if self._cr_pending and data:
            # CR ended the previous feed and was taken as a line end; this LF is its pair.
            self._cr_pending = False
            if data[:1] == b"\n":
                data = data[1:]
        if not data:
            return [], None
        # Byte tests use int needles: ``13 in data`` is a plain memchr, while ``b"\r" in data``
        # goes through the general substring search, several times slower on a 4 KiB read.
        if 13 in data:  # CR
            self._cr_pending = data[-1:] == b"\r"
            # CRLF first, so that it becomes one line end rather than two.
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if 10 not in data:  # no LF
            # No line ends in this read (a slow drip, or a long line): keep the piece and join
            # once a line end arrives, rather than copy the growing line on every read.
            self._buf.append(data)
            self._buf_bytes += len(data)
            if self._buf_bytes > self._max_line:
                self._check_lengths([])
            return [], None
        if self._buf:
            self._buf.append(data)
            data = b"".join(self._buf)
        lines = data.split(b"\n")
        tail = lines.pop()
        self._buf = [tail] if tail else []
        self._buf_bytes = len(tail)
        if len(data) > self._max_line:
            self._check_lengths(lines)
        if not lines:
            return [], None
        if self._at_start:
            self._at_start = False
            if lines[0][:3] == _BOM:
                lines[0] = lines[0][3:]
        return self._lines(lines)

    def close(self) -> list[SSEEvent]:
        """End of body: return the last event if it was left without its blank line.

        Deviation from WHATWG (which discards such an event): servers that close the
        connection right after the last ``data:`` line, without the blank line or even the
        final newline, are common enough, and dropping their last event would lose a token or
        the ``[DONE]``. So the pending line is processed and an event with data is dispatched.
        The decoder is then reset and may be reused for another body.
        """
        lines = [b"".join(self._buf)] if self._buf else []
        if self._at_start and lines and lines[0][:3] == _BOM:
            lines[0] = lines[0][3:]
        lines.append(b"")  # the blank line the server did not send
        events = _typed(*self._lines(lines))
        self._reset()
        return events

    def _check_lengths(self, lines: list[bytes]) -> None:
        # Only reached when the data of this feed exceeds the limit, so the common path
        # never measures lines; checking complete lines too keeps the outcome split-independent.
        longest = max([self._buf_bytes, *map(len, lines)])
        if longest > self._max_line:
            raise SSEError(f"SSE line of {longest} bytes exceeds the {self._max_line}-byte limit")

    def _lines(self, lines: list[bytes]) -> _Decoded:
        payloads: list[bytes] = []
        types: list[str | None] | None = None  # only once an event had a type (rare)
        data = self._data
        for line in lines:
            if not line:
                if data is not None:
                    if self._more is not None:
                        data = self._joined(data)
                    if self._event is not None or types is not None:
                        types = types if types is not None else [None] * len(payloads)
                        types.append(self._event)
                    payloads.append(data)
                    data = None
                self._event = None
            elif line[:6] == b"data: ":
                if data is None:
                    data = line[6:]
                else:
                    self._append(line[6:])
            elif line[:1] != b":":
                data = self._field(line, data)
        self._data = data
        return payloads, types

    def _field(self, line: bytes, data: bytes | None) -> bytes | None:
        """Any line other than blank, comment or ``data: ``; returns the pending data."""
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            if data is None:
                return value
            self._append(value)
        elif name == b"event":
            event = value.decode("utf-8", "replace")
            self._event = None if event in ("", "message") else event
        return data

    def _append(self, value: bytes) -> None:
        if self._more is None:
            self._more = []
        self._more.append(value)
        # One event of many short data lines grows without any long line: bound it too
        # (each line costs its bytes plus the joining LF).
        self._more_bytes += len(value) + 1
        if self._more_bytes > self._max_line:
            raise SSEError(f"SSE event data exceeds the {self._max_line}-byte limit")

    def _joined(self, first: bytes) -> bytes:
        more = self._more or []
        self._more = None
        self._more_bytes = 0
        return b"\n".join([first, *more])
