"""HTTP/1.1 response framing and request rendering, without sockets."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmload.protocol.http1 import (
    MAX_HEAD_BYTES,
    HttpFramingError,
    ResponseHead,
    ResponseParser,
    render_request,
)
from llmload.transport.base import HttpRequest

CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"


def parse(raw: bytes, *, eof: bool = False, method: str = "GET") -> tuple[ResponseParser, bytes]:
    parser = ResponseParser(method)
    body = parser.feed(raw).body
    if eof:
        parser.feed_eof()
    return parser, body


def feed_pieces(pieces: list[bytes]) -> tuple[list[ResponseHead], bytes, ResponseParser]:
    parser = ResponseParser()
    heads, body = [], b""
    for piece in pieces:
        parsed = parser.feed(piece)
        if parsed.head is not None:
            heads.append(parsed.head)
        body += parsed.body
    return heads, body, parser


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def test_chunked_with_extensions_and_trailers() -> None:
    raw = CHUNKED + b'5;foo=bar\r\nhello\r\n6 ; a="b;c"\r\n world\r\n0\r\nX-T: 1\r\n\r\n'
    parser = ResponseParser()
    parsed = parser.feed(raw)
    assert parsed.head == ResponseHead(200, "OK", "HTTP/1.1", {"transfer-encoding": "chunked", "x-a": "1"})
    assert parsed.body == b"hello world"
    assert parsed.complete and parser.complete and parser.reusable


def test_head_is_reported_once_and_names_are_lower_cased() -> None:
    raw = b"HTTP/1.1 429 Slow Down\r\nRetry-After: 2\r\nVia: a\r\nvia: b\r\nContent-Length: 0\r\n\r\n"
    parser = ResponseParser()
    first = parser.feed(raw)
    assert first.head is not None
    assert first.head.headers == {"retry-after": "2", "via": "a, b", "content-length": "0"}
    assert first.complete
    assert parser.feed(b"").head is None


def test_interim_responses_are_skipped() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Hints\r\nLink: x\r\n\r\n" + CHUNKED
    parsed = ResponseParser().feed(raw + b"2\r\nok\r\n0\r\n\r\n")
    assert parsed.head is not None and parsed.head.status == 200
    assert parsed.body == b"ok"


@pytest.mark.parametrize("status", [204, 304])
def test_no_body_statuses(status: int) -> None:
    parser, body = parse(b"HTTP/1.1 %d X\r\nContent-Length: 10\r\n\r\n" % status)
    assert body == b"" and parser.complete and parser.reusable


def test_head_request_has_no_body() -> None:
    parser, _ = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", method="HEAD")
    assert parser.complete


def test_content_length_body_and_excess() -> None:
    parser, body = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhelloEXTRA")
    assert body == b"hello" and parser.complete
    assert not parser.reusable  # bytes nobody asked for: the connection is not trusted again


def test_close_delimited_body_ends_at_eof() -> None:
    parser, body = parse(b"HTTP/1.1 200 OK\r\n\r\nabc")
    assert body == b"abc" and not parser.complete
    assert parser.feed(b"def").body == b"def"
    assert parser.feed_eof() and parser.complete and not parser.reusable


def test_eof_inside_framing_is_not_an_end() -> None:
    parser, _ = parse(CHUNKED + b"10\r\nshort")
    assert not parser.feed_eof()


def test_transfer_encoding_beats_content_length() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
    _, body = parse(raw + b"1\r\nx\r\n0\r\n\r\n")
    assert body == b"x"


@pytest.mark.parametrize(
    ("head", "reusable"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\n", False),
        (b"HTTP/1.0 200 OK\r\n", False),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n", True),
    ],
)
def test_reuse(head: bytes, reusable: bool) -> None:
    parser, _ = parse(head + b"Content-Length: 1\r\n\r\nx")
    assert parser.complete and parser.reusable is reusable


def test_bare_lf_and_obs_fold_are_tolerated() -> None:
    parsed = ResponseParser().feed(b"HTTP/1.1 200 OK\nX-A: a\n  b\nContent-Length: 1\n\nz")
    assert parsed.head is not None and parsed.head.headers["x-a"] == "a b"
    assert parsed.body == b"z"


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 101 Switching\r\n\r\n",
        b"SSH-2.0-OpenSSH\r\n",
        CHUNKED + b"zz\r\n",
        CHUNKED + b"0x5\r\nhello\r\n",
        CHUNKED + b"+5\r\nhello\r\n",
        CHUNKED + b"1_0\r\n",
        CHUNKED + b"\r\n",
        CHUNKED + b"11111111111111111\r\n",
        CHUNKED + b"5\r\nhelloXX",
        CHUNKED + b"1" * 9000,
    ],
)
def test_malformed_framing_raises(raw: bytes) -> None:
    with pytest.raises(HttpFramingError):
        ResponseParser().feed(raw)


def test_oversized_head_raises_even_when_fed_bytewise() -> None:
    parser = ResponseParser()
    parser.feed(b"HTTP/1.1 200 OK\r\n")
    line = b"X-Pad: " + b"p" * 1000 + b"\r\n"
    with pytest.raises(HttpFramingError, match="64 KiB"):
        for _ in range(MAX_HEAD_BYTES // len(line) + 1):
            parser.feed(line)


def test_malformed_is_a_value_error() -> None:
    assert issubclass(HttpFramingError, ValueError)


chunk_bodies = st.lists(st.binary(min_size=1, max_size=300), max_size=12)
extensions = st.sampled_from([b"", b";a=b", b' ; x="1;2"', b";n"])


@given(
    chunk_bodies,
    st.lists(extensions, min_size=12, max_size=12),
    st.lists(st.integers(min_value=0), max_size=40),
    st.booleans(),
)
def test_any_split_yields_the_same_chunked_body(
    bodies: list[bytes], exts: list[bytes], cuts: list[int], trailer: bool
) -> None:
    stream = CHUNKED + b"".join(
        b"%x%s\r\n%s\r\n" % (len(b), e, b) for b, e in zip(bodies, exts, strict=False)
    )
    stream += b"0\r\nX-Trailer: yes\r\n\r\n" if trailer else b"0\r\n\r\n"
    heads, body, parser = feed_pieces(split_at(stream, cuts))
    assert [h.status for h in heads] == [200]
    assert body == b"".join(bodies)
    assert parser.complete and parser.reusable


@given(st.binary(max_size=500), st.lists(st.integers(min_value=0), max_size=30))
def test_any_split_yields_the_same_length_body(payload: bytes, cuts: list[int]) -> None:
    stream = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload
    heads, body, parser = feed_pieces(split_at(stream, cuts))
    assert len(heads) == 1 and body == payload and parser.complete


@given(st.binary(max_size=300))
def test_one_byte_feeds(payload: bytes) -> None:
    stream = CHUNKED + (b"%x\r\n%s\r\n" % (len(payload), payload) if payload else b"") + b"0\r\n\r\n"
    heads, body, parser = feed_pieces([stream[i : i + 1] for i in range(len(stream))])
    assert len(heads) == 1 and body == payload and parser.complete


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_framing_errors(noise: bytes) -> None:
    parser = ResponseParser()
    try:
        parser.feed(noise)
        parser.feed(CHUNKED + noise)
    except HttpFramingError:
        pass


def test_a_64k_read_of_small_chunks_is_not_parsed_bytewise() -> None:
    event = b"data: " + b"x" * 240 + b"\n\n"
    framed = b"%x\r\n%s\r\n" % (len(event), event)
    count = 65536 // len(framed)
    read = framed * count
    parser = ResponseParser()
    parser.feed(CHUNKED)
    started = time.process_time()
    for _ in range(100):
        assert len(parser.feed(read).body) == count * len(event)
    # ~30 ms here; a Python loop per byte would take seconds.
    assert time.process_time() - started < 1.0


def test_render_request() -> None:
    request = HttpRequest("POST", "/v1/chat/completions", (("Authorization", "Bearer k"),), b"{}")
    assert render_request(request, "h:8000", path_prefix="/proxy") == (
        b"POST /proxy/v1/chat/completions HTTP/1.1\r\nHost: h:8000\r\n"
        b"Authorization: Bearer k\r\nContent-Length: 2\r\nAccept-Encoding: identity\r\n\r\n{}"
    )


def test_render_get_without_body_and_own_encoding() -> None:
    request = HttpRequest("GET", "/v1/models", (("Accept-Encoding", "br"),), b"")
    assert render_request(request, "h") == (
        b"GET /v1/models HTTP/1.1\r\nHost: h\r\nAccept-Encoding: br\r\n\r\n"
    )


@pytest.mark.parametrize(
    "headers",
    [(("X-A", "v\r\nInjected: 1"),), (("Host", "x"),), (("Content-Length", "1"),), (("A B", "v"),)],
)
def test_render_refuses_bad_headers(headers: tuple[tuple[str, str], ...]) -> None:
    with pytest.raises(ValueError, match="header"):
        render_request(HttpRequest("GET", "/", headers, b""), "h")
