"""The tuned hot path decodes exactly what the plain one does, however the bytes are split.

The per-parser cache of chunk-size lines and the recorder's per-read loop are only worth their
complexity if they change nothing: any split of a long stream with repeated chunk sizes (the
case the cache serves), extensions, upper-case hex, CRLF inside chunk data and bare-LF size
lines frames to the same body as one byte per feed, and ``SSEDecoder.feed_data`` gives the data
of ``feed``'s events.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.protocol.http1 import ResponseParser
from llmload.protocol.sse import SSEDecoder

HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
payloads = st.lists(
    st.sampled_from([b"data: {}\n\n", b'data: {"a":1}\n\n', b"x\r\ny", b"\r\n", b"z"]),
    min_size=1,
    max_size=60,
)
size_lines = st.sampled_from([b"%x\r\n", b"%X\r\n", b"%x;ext=1\r\n", b"%x\n", b"00%x\r\n"])


def frame(pieces: list[bytes], forms: list[bytes]) -> bytes:
    chunks = [(forms[i % len(forms)] % len(p)) + p + b"\r\n" for i, p in enumerate(pieces)]
    return HEAD + b"".join(chunks) + b"0\r\n\r\n"


def feed(raw: bytes, cuts: list[int]) -> tuple[bytes, bool]:
    """Fed as the transport does (``deliver``): a whole chunk by the shortcut, else ``feed``."""
    parser = ResponseParser("GET")
    body, start = [], 0
    for cut in [*sorted({c % (len(raw) + 1) for c in cuts}), len(raw)]:
        data = raw[start:cut]
        whole = parser.whole_chunk(data)
        body.append(parser.feed(data).body if whole is None else whole)
        start = cut
    return b"".join(body), parser.complete


def boundaries(pieces: list[bytes], offset: int, picks: list[bool]) -> list[int]:
    """Some of the positions where one piece ends and the next begins, as a paced server's
    reads end."""
    ends, pos = [], offset
    for piece, pick in zip(pieces, picks * len(pieces), strict=False):
        pos += len(piece)
        if pick:
            ends.append(pos)
    return ends


@settings(max_examples=300, deadline=None)
@given(payloads, st.lists(size_lines, min_size=1, max_size=3), st.lists(st.integers(0, 10**6), max_size=25))
def test_any_split_of_repeated_chunk_sizes_frames_the_same_body(
    pieces: list[bytes], forms: list[bytes], cuts: list[int]
) -> None:
    raw = frame(pieces, forms)
    chunks = [(forms[i % len(forms)] % len(p)) + p + b"\r\n" for i, p in enumerate(pieces)]
    cuts = cuts + boundaries(chunks, len(HEAD), [True, True, False])  # whole chunks too
    whole, done = feed(raw, cuts)
    bytewise, done_bytewise = feed(raw, list(range(len(raw))))
    assert whole == bytewise == b"".join(pieces)
    assert done and done_bytewise


events = st.lists(
    st.sampled_from(
        [
            b"data: a\n\n",
            b"data: b\r\n\r\n",
            b"event: x\ndata: c\n\n",
            b": ping\n\n",
            b"data: d\ndata: e\n\n",
            b"data:f\n\n",
        ]
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(events, st.lists(st.integers(0, 10**6), max_size=20))
def test_feed_data_is_the_data_of_feed(parts: list[bytes], cuts: list[int]) -> None:
    raw = b"".join(parts)
    cuts = cuts + boundaries(parts, 0, [True, True, False])  # whole events too (whole_event)
    points = [*sorted({c % (len(raw) + 1) for c in cuts}), len(raw)]
    full, data_only = SSEDecoder(), SSEDecoder()
    start, a, b = 0, [], []
    for cut in points:
        a += [e.data for e in full.feed(raw[start:cut])]
        b += data_only.feed_data(raw[start:cut])
        start = cut
    assert a == b
