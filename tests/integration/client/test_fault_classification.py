"""A raw-socket fault fixture that never names its fault: the client classifies what it observes.

Each case is what a broken or overloaded server puts on the wire; the whole client path (body,
lean transport, HTTP/1.1 framing, SSE, chunks, recorder) must turn it into one ``ErrorKind`` on
the record, raise nothing, and leak no socket.
"""

from __future__ import annotations

import os
import time

import gevent
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from llmload.config.asked import RequestConfig
from llmload.core.phases import Window
from llmload.core.record import OK, RequestRecord
from llmload.core.timeouts import Timeouts
from llmload.errors import ErrorKind
from llmload.protocol.sse import DONE, SSEDecoder, SSEError
from llmload.run.client import ApiClient
from llmload.transport.factory import TransportConfig, TransportFactory
from llmload.workload.prompts import Prompt
from tests.support.rawserver import Close, RawServer, Reset, Send, SendBytewise, Sleep, chunk, chunked_head

pytestmark = pytest.mark.integration

PROMPT = Prompt(({"role": "user", "content": "hi"},), "hi", 1, 4, "test")


def event(payload: dict[str, object]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


TOKEN = event({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]})
LAST = event(
    {
        "choices": [{"index": 0, "delta": {"content": "y"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
)


def run_one(script: list[object], timeouts: Timeouts | None = None) -> RequestRecord:
    with RawServer(script) as server:  # type: ignore[arg-type]
        factory = TransportFactory(TransportConfig(server.url, connect_timeout_s=2))
        client = ApiClient(RequestConfig(), "m", timeouts or Timeouts(1.0, 0.5, 5.0))
        transport = factory.new()
        try:
            call = client.call(PROMPT, "chat")
            return client.run(transport, call, request_id="r", user="u", stage=0, window=Window(t0_ns=0))
        finally:
            transport.close()
            factory.close()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(autouse=True, scope="module")
def _warm_gevent() -> None:
    """The hub opens its own descriptors on first use: let that happen before counting."""
    run_one([Send(chunked_head() + chunk(LAST) + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")])


CASES = {
    "rst mid body": ([Send(chunked_head() + chunk(TOKEN)), Reset()], ErrorKind.STREAM_BROKEN),
    "truncated chunked framing": (
        [Send(chunked_head() + chunk(TOKEN) + b"40\r\ndata: {"), Close()],
        ErrorKind.STREAM_BROKEN,
    ),
    "invalid chunk-size hex": (
        [Send(chunked_head() + chunk(TOKEN) + b"zz\r\nxx\r\n"), Close()],
        ErrorKind.BAD_PAYLOAD,
    ),
    "clean end without [DONE]": (
        [Send(chunked_head() + chunk(TOKEN) + b"0\r\n\r\n")],
        ErrorKind.STREAM_BROKEN,
    ),
    "invalid JSON": (
        [Send(chunked_head() + chunk(b'data: {"choices": [\n\n') + b"0\r\n\r\n")],
        ErrorKind.BAD_PAYLOAD,
    ),
    "429 with Retry-After": (
        [
            Send(
                b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\n"
                b'Content-Length: 22\r\n\r\n{"error": "slow down"}'
            )
        ],
        ErrorKind.HTTP_429,
    ),
    "503": ([Send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")], ErrorKind.HTTP_5XX),
    "error object in the stream": (
        [
            Send(
                chunked_head()
                + chunk(TOKEN)
                + chunk(event({"error": {"message": "engine died", "code": 500}}))
                + b"0\r\n\r\n"
            )
        ],
        ErrorKind.ERROR_EVENT,
    ),
    "stall before the first token": (
        [Send(chunked_head()), Sleep(2.0), Close()],
        ErrorKind.FIRST_TOKEN_TIMEOUT,
    ),
    "stall between events": (
        [Send(chunked_head() + chunk(TOKEN)), Sleep(2.0), Close()],
        ErrorKind.STALL_TIMEOUT,
    ),
    "refused before sending": ([Reset()], ErrorKind.STREAM_BROKEN),
}


@pytest.mark.parametrize("name", list(CASES))
def test_faults_are_classified_from_what_the_client_observes(name: str) -> None:
    script, kind = CASES[name]
    before = open_fds()
    record = run_one(script)  # type: ignore[arg-type]
    assert record.outcome == kind.value, (name, record.error_detail)
    assert record.done_ns is not None
    gevent.sleep(0)
    assert open_fds() <= before, "a socket leaked"
    if kind is ErrorKind.HTTP_429:
        assert record.error_detail is not None and "retry-after: 7" in record.error_detail


def test_a_slow_drip_is_delivered_whole_and_counts_every_token() -> None:
    body = TOKEN + LAST + b"data: [DONE]\n\n"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    record = run_one(
        [Send(head), SendBytewise(body[:40], 0.1), Send(body[40:]), Close()], Timeouts(10.0, 10.0, 20.0)
    )
    assert record.outcome == "ok" and record.output_tokens == 2


def test_the_good_stream_is_ok() -> None:
    record = run_one(
        [Send(chunked_head() + chunk(TOKEN) + chunk(LAST) + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")]
    )
    assert record.outcome == "ok" and record.output_tokens == 2


def done_first(body: bytes) -> bool:
    decoder = SSEDecoder()
    try:
        events = decoder.feed(body) + decoder.close()
    except SSEError:
        return False
    return bool(events) and events[0].data == DONE


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(garbage=st.binary(min_size=1, max_size=300))
@example(garbage=b"data:[DONE]")
def test_random_bytes_in_the_body_never_raise_and_never_leak(garbage: bytes) -> None:
    before = open_fds()
    greenlets_before = gevent.get_hub().loop.activecnt
    record = run_one([Send(chunked_head() + chunk(garbage) + b"0\r\n\r\n")], Timeouts(0.5, 0.5, 2.0))
    # Random bytes are either no SSE event at all (then the stream ended without [DONE]) or
    # an event that is not a JSON object: never an exception, and "ok" only for the rare bytes
    # that are a [DONE] event (hypothesis found ``data:[DONE]``): an empty but valid stream.
    expected = (OK,) if done_first(garbage) else (ErrorKind.BAD_PAYLOAD.value, ErrorKind.STREAM_BROKEN.value)
    assert record.outcome in expected
    time.sleep(0)
    assert open_fds() <= before
    assert gevent.get_hub().loop.activecnt <= greenlets_before + 1  # not timing: watchers counted


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(garbage=st.binary(min_size=1, max_size=200))
def test_random_bytes_as_the_whole_response_are_bad_payload(garbage: bytes) -> None:
    record = run_one([Send(b"HTTP/1.1 200 OK\r\n" + garbage), Close()], Timeouts(0.5, 0.5, 2.0))
    assert record.outcome in (
        ErrorKind.BAD_PAYLOAD.value,
        ErrorKind.STREAM_BROKEN.value,
        ErrorKind.FIRST_TOKEN_TIMEOUT.value,
    )
