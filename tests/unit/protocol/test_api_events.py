"""The Responses and Messages APIs' event grammars, read into the same record as chat, whatever
the reads cut the stream into; the streams are the simulator's renderers', as a server sends."""

from __future__ import annotations

import contextlib

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord, TokenSource
from llmload.core.recorder import ResponseRecorder
from llmload.core.timeouts import Timeouts
from llmload.errors import ErrorKind
from llmload.protocol.api_events import messages_body, messages_fields, responses_body, responses_fields
from llmload.protocol.chunks import BadChunk
from llmload.sim.api_render import MessagesRenderer, ResponsesRenderer
from llmload.sim.api_render import messages_body as sim_messages_body
from llmload.sim.api_render import responses_body as sim_responses_body

MS = 1_000_000
THOUGHT, ANSWER = 3, 5


def _stream(api: str) -> list[bytes]:
    """One event per token (3 thinking, 5 answer), then the close: one write each."""
    renderer: ResponsesRenderer | MessagesRenderer = (
        ResponsesRenderer(response_id="r1", created=0, model="m", prompt_tokens=20)
        if api == "responses"
        else MessagesRenderer(response_id="r1", model="m", prompt_tokens=20)
    )
    writes = [renderer.role(0, 4)]
    writes += [renderer.reasoning(b" hm", None, i + 1, 0) for i in range(THOUGHT)]
    writes += [renderer.text(b" yes", None, THOUGHT + i + 1, 0) for i in range(ANSWER)]
    writes.append(renderer.usage(THOUGHT + ANSWER, 0, 4, THOUGHT, finish_reason="length"))
    return writes


def _record(api: str, *, stream: bool = True) -> ResponseRecorder:
    r = RequestRecord("r", "u", 0, Phase.MEASURE, api, stream, scheduled_ns=0, sent_ns=0)
    return ResponseRecorder(r, Timeouts())


@pytest.mark.parametrize("api", ["responses", "messages"])
@given(cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_any_split_of_the_stream_reads_as_the_same_record(api: str, cuts: list[int]) -> None:
    data = b"".join(_stream(api))
    points = sorted({c % (len(data) + 1) for c in cuts})
    rec = _record(api)
    for i, (a, b) in enumerate(zip([0, *points], [*points, len(data)], strict=True)):
        if a < b:
            rec.on_data((i + 1) * MS, data[a:b])
    rec.on_end(99 * MS)
    r = rec.finish(99 * MS)
    assert r.ok, r.error_detail
    assert (r.output_tokens, r.reasoning_tokens, r.answer_tokens) == (THOUGHT + ANSWER, THOUGHT, ANSWER)
    assert r.token_events == THOUGHT + ANSWER and r.token_source is TokenSource.USAGE
    assert r.finish_reason == "length" and r.prompt_tokens == 20 and r.cached_tokens == 4
    assert r.first_token_ns is not None and r.first_output_ns is not None
    assert r.first_token_ns <= r.first_output_ns <= r.last_token_ns  # type: ignore[operator]


@pytest.mark.parametrize("api", ["responses", "messages"])
def test_each_token_read_apart_stamps_thinking_then_answer(api: str) -> None:
    rec = _record(api)
    for i, write in enumerate(_stream(api)):
        rec.on_data((i + 1) * MS, write)
    rec.on_end(99 * MS)
    r = rec.finish(99 * MS)
    # the opening carries no token; the first thinking delta is the second write
    assert (r.first_token_ns, r.first_output_ns, r.last_token_ns) == (2 * MS, (2 + THOUGHT) * MS, 9 * MS)


def test_whole_bodies_read_their_usage_finish_and_thinking() -> None:
    body = sim_responses_body(
        response_id="r", created=0, model="m", text="a b", finish_reason="stop", prompt_tokens=9,
        completion_tokens=5, cached_tokens=2, reasoning=("x y z", 3), metrics=None,
    )  # fmt: skip
    bearing, content, finish, completion, prompt, error, cached, _, reasoning, thought, _ = responses_body(
        body
    )
    assert (bearing, content, finish, completion, prompt, error, cached, reasoning, thought) == (
        True, True, "stop", 5, 9, None, 2, True, 3)  # fmt: skip
    body = sim_messages_body(
        response_id="r", model="m", text="a b", finish_reason="length", prompt_tokens=9, completion_tokens=5,
        cached_tokens=2, reasoning=None,
    )  # fmt: skip
    bearing, content, finish, completion, prompt, error, cached, _, reasoning, _, _ = messages_body(body)
    # Anthropic counts the cached part apart from input_tokens: the prompt is their sum
    assert (bearing, content, finish, completion, prompt, cached, reasoning) == (
        True,
        True,
        "length",
        5,
        9,
        2,
        False,
    )


@pytest.mark.parametrize(
    ("fields", "event", "message"),
    [
        (responses_fields, {"type": "error", "code": "500", "message": "engine died"}, "engine died"),
        (
            responses_fields,
            {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"message": "out of memory"}},
            },
            "out of memory",
        ),
        (
            messages_fields,
            {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
            "busy",
        ),
    ],
)
def test_each_apis_error_event_is_an_error(fields: object, event: dict[str, object], message: str) -> None:
    assert fields(orjson.dumps(event))[5] == message  # type: ignore[operator]


@pytest.mark.parametrize("api", ["responses", "messages"])
def test_an_error_event_mid_stream_fails_the_request_as_chat_does(api: str) -> None:
    writes = _stream(api)
    renderer: ResponsesRenderer | MessagesRenderer = MessagesRenderer(
        response_id="r", model="m", prompt_tokens=1
    )
    if api == "responses":
        renderer = ResponsesRenderer(response_id="r", created=0, model="m", prompt_tokens=1)
    rec = _record(api)
    rec.on_data(MS, writes[0] + writes[1])
    rec.on_data(2 * MS, renderer.error("engine died", 500))
    r = rec.finish(3 * MS)
    assert r.outcome.value == ErrorKind.ERROR_EVENT.value and r.error_detail == "engine died"


@given(st.binary(max_size=64))
def test_any_bytes_are_an_event_or_bad_chunk(data: bytes) -> None:
    for fields in (responses_fields, messages_fields):
        with contextlib.suppress(BadChunk):
            fields(data)


def test_a_last_event_that_repeats_the_whole_output_bears_no_token() -> None:
    # llama.cpp (as OpenAI) sends the whole output again in response.completed, and its timings
    output = [{"type": "message", "content": [{"type": "output_text", "text": "Hello, welcome"}]}]
    usage = {"input_tokens": 31, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 30}}
    timings = {"prompt_n": 1, "prompt_ms": 16.7, "predicted_n": 5, "predicted_ms": 65.7, "cache_n": 30}
    response = {"status": "completed", "output": output, "usage": usage}
    event = {"type": "response.completed", "response": response, "timings": timings}
    bearing, content, finish, completion, prompt, _, cached, kept, reasoning, _, _ = responses_fields(
        orjson.dumps(event)
    )
    assert (bearing, content, reasoning) == (False, False, False)
    assert (finish, completion, prompt, cached) == ("stop", 5, 31, 30)
    assert kept == timings
