"""The SSE decoder against the WHATWG rules, and its indifference to how bytes are split."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.protocol.sse import DONE, SSEDecoder, SSEError, SSEEvent


def decode(*feeds: bytes, decoder: SSEDecoder | None = None) -> list[SSEEvent]:
    d = decoder or SSEDecoder()
    events: list[SSEEvent] = []
    for feed in feeds:
        events.extend(d.feed(feed))
    events.extend(d.close())
    return events


def reference(stream: bytes) -> list[SSEEvent]:
    """A literal, slow reading of the WHATWG algorithm (plus our dispatch at end of body)."""
    if stream.startswith(b"\xef\xbb\xbf"):
        stream = stream[3:]
    lines = re.split(rb"\r\n|\r|\n", stream)
    if lines[-1] == b"":
        lines.pop()  # the stream ended with a line end: no pending partial line
    events: list[SSEEvent] = []
    data: list[bytes] | None = None
    event: str | None = None
    for line in [*lines, b""]:
        if line == b"":
            if data is not None:
                events.append(SSEEvent(b"\n".join(data), event))
            data, event = None, None
            continue
        if line.startswith(b":"):
            continue
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            data = [*(data or []), value]
        elif name == b"event":
            text = value.decode("utf-8", "replace")
            event = None if text in ("", "message") else text
    return events


def test_typical_openai_stream() -> None:
    body = b'data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'
    assert decode(body) == [
        SSEEvent(b'{"a":1}', None),
        SSEEvent(b'{"a":2}', None),
        SSEEvent(DONE, None),
    ]


def test_feed_returns_only_completed_events() -> None:
    d = SSEDecoder()
    assert d.feed(b'data: {"a"') == []
    assert d.feed(b":1}\n") == []
    assert d.feed(b"\n") == [SSEEvent(b'{"a":1}', None)]
    assert d.close() == []


def test_fields_comments_and_spaces() -> None:
    body = (
        b": keep-alive comment\n"
        b"id: 7\nretry: 1000\nfoo: bar\n"
        b"event: error\n"
        b"data:no-space\n"
        b"data:  two spaces\n"
        b"data\n"
        b"\n"
        b"event: only-type\n\n"  # no data: not dispatched, and the type does not leak
        b"event: message\ndata: x\n\n"
    )
    assert decode(body) == [
        SSEEvent(b"no-space\n two spaces\n", "error"),
        SSEEvent(b"x", None),
    ]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings(eol: bytes) -> None:
    body = b"data: a" + eol + b"data: b" + eol + eol + b"data: c" + eol + eol
    assert decode(body) == [SSEEvent(b"a\nb", None), SSEEvent(b"c", None)]


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SSEEvent(b"a", None),
        SSEEvent(b"b", None),
    ]
    # CR, then an empty feed, then LF: still one line end.
    assert decode(b"data: a\r", b"", b"\ndata: b\n\n") == [SSEEvent(b"a\nb", None)]


def test_bom_dropped_once_at_start() -> None:
    assert decode(b"\xef\xbb", b"\xbfdata: a\n\n") == [SSEEvent(b"a", None)]
    assert decode(b"data: a\n\n\xef\xbb\xbfdata: b\n\n") == [SSEEvent(b"a", None)]


def test_close_dispatches_trailing_event_without_blank_line() -> None:
    assert decode(b"data: a\n\ndata: [DONE]") == [SSEEvent(b"a", None), SSEEvent(DONE, None)]
    assert decode(b"data: a\n\ndata: [DONE]\n") == [SSEEvent(b"a", None), SSEEvent(DONE, None)]
    assert decode(b"event: x\n") == []
    assert decode(b"") == []


def test_decoder_is_reusable_after_close() -> None:
    d = SSEDecoder()
    assert decode(b"data: a", decoder=d) == [SSEEvent(b"a", None)]
    assert decode(b"data: b\n\n", decoder=d) == [SSEEvent(b"b", None)]


def test_line_longer_than_limit_raises() -> None:
    d = SSEDecoder(max_line_bytes=64)
    d.feed(b"data: " + b"x" * 50)
    with pytest.raises(SSEError):
        d.feed(b"x" * 20)
    with pytest.raises(SSEError):
        SSEDecoder(max_line_bytes=64).feed(b"data: " + b"x" * 70 + b"\n\n")
    with pytest.raises(SSEError):  # many short data lines in one event
        SSEDecoder(max_line_bytes=64).feed(b"data: 12345678\n" * 10)
    ok = SSEDecoder(max_line_bytes=64)  # many short lines over many events are fine
    assert len(ok.feed(b"data: 12345678\n\n" * 10)) == 10


def test_default_limit_is_16_mib() -> None:
    d = SSEDecoder()
    d.feed(b"data: " + b"x" * (16 * 1024 * 1024 - 6))
    with pytest.raises(SSEError):
        d.feed(b"x")


def test_long_line_dripped_in_small_reads_costs_linear_time() -> None:
    # Copying the growing line on every read would move ~137 GB here and take minutes.
    d = SSEDecoder()
    piece = b"x" * 1024
    start = time.process_time()
    assert d.feed(b"data: ") == []
    for _ in range(16 * 1024 - 1):
        assert d.feed(piece) == []
    (event,) = d.feed(b"\n\n")
    assert len(event.data) == 16 * 1024 * 1024 - 1024
    assert time.process_time() - start < 5.0


_payload = st.binary(max_size=12).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
_line = st.one_of(
    st.builds(lambda sp, p: b"data:" + sp + p, st.sampled_from([b"", b" ", b"  "]), _payload),
    st.builds(lambda p: b"event: " + p, st.sampled_from([b"", b"message", b"error", b"x"])),
    st.sampled_from([b"", b"", b": comment", b"id: 3", b"retry: 5", b"data", b"x: y", b":"]),
    st.just(b"\xef\xbb\xbfdata: bom"),
)
_eol = st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"])
_stream = st.builds(
    lambda lines, bom: bom + b"".join(line + eol for line, eol in lines),
    st.lists(st.tuples(_line, _eol), max_size=30),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
)


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


@settings(max_examples=400)
@given(
    _stream,
    st.binary(max_size=8).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.lists(st.integers(min_value=0), max_size=20),
)
def test_any_split_of_valid_stream_decodes_the_same(stream: bytes, tail: bytes, cuts: list[int]) -> None:
    stream += tail  # sometimes end mid-line, as a server that closes early
    expected = reference(stream)
    assert decode(stream) == expected
    assert decode(*split(stream, cuts)) == expected
    assert decode(*(stream[i : i + 1] for i in range(len(stream)))) == expected


@given(st.binary(max_size=200), st.lists(st.integers(min_value=0), max_size=20))
def test_any_split_of_arbitrary_bytes_decodes_the_same(stream: bytes, cuts: list[int]) -> None:
    expected = reference(stream)
    assert decode(stream) == expected
    assert decode(*split(stream, cuts)) == expected
