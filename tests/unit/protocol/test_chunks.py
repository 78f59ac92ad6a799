"""Chunk reading against payloads as vLLM, SGLang and OpenAI actually send them."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmload.protocol.chunks import (
    BadChunk,
    ChunkInfo,
    chunk_fields,
    event_fields,
    parse_chunk,
    parse_response,
)


def chunk(
    token_bearing: bool = False,
    has_content: bool = False,
    *,
    finish_reason: str | None = None,
    completion_tokens: int | None = None,
    prompt_tokens: int | None = None,
    error: str | None = None,
    cached_tokens: int | None = None,
    reasoning: bool = False,
    reasoning_tokens: int | None = None,
) -> ChunkInfo:
    return ChunkInfo(
        token_bearing,
        has_content,
        finish_reason,
        completion_tokens,
        prompt_tokens,
        error,
        cached_tokens,
        reasoning=reasoning,
        reasoning_tokens=reasoning_tokens,
    )


_HEAD = b'"id":"chatcmpl-b1f0","object":"chat.completion.chunk","created":1764445000,"model":"m"'
_VLLM_USAGE = b'"usage":{"prompt_tokens":12,"total_tokens":%d,"completion_tokens":%d}'

VLLM = [  # vLLM with stream_options {include_usage, continuous_usage_stats}
    (
        b'{%s,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,'
        b'"finish_reason":null}],%s}' % (_HEAD, _VLLM_USAGE % (12, 0)),
        chunk(completion_tokens=0, prompt_tokens=12),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,'
        b'"finish_reason":null}],%s}' % (_HEAD, _VLLM_USAGE % (13, 1)),
        chunk(True, True, completion_tokens=1, prompt_tokens=12),
    ),
    (  # speculative decoding: several tokens in one event, seen only through usage
        b'{%s,"choices":[{"index":0,"delta":{"content":" world, how"},"logprobs":null,'
        b'"finish_reason":null}],%s}' % (_HEAD, _VLLM_USAGE % (16, 4)),
        chunk(True, True, completion_tokens=4, prompt_tokens=12),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{"content":""},"logprobs":null,'
        b'"finish_reason":"length","stop_reason":null}],%s}' % (_HEAD, _VLLM_USAGE % (16, 4)),
        chunk(finish_reason="length", completion_tokens=4, prompt_tokens=12),
    ),
    (  # the usage-only final event
        b'{%s,"choices":[],%s}' % (_HEAD, _VLLM_USAGE % (16, 4)),
        chunk(completion_tokens=4, prompt_tokens=12),
    ),
]

SGLANG = [
    (
        b'{%s,"choices":[{"index":0,"delta":{"role":"assistant","content":"",'
        b'"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,'
        b'"matched_stop":null}],"usage":null}' % _HEAD,
        chunk(),
    ),
    (  # a reasoning model thinking: token-bearing, but not output yet
        b'{%s,"choices":[{"index":0,"delta":{"role":null,"content":null,'
        b'"reasoning_content":"Let me think","tool_calls":null},"logprobs":null,'
        b'"finish_reason":null,"matched_stop":null}],"usage":null}' % _HEAD,
        chunk(True, reasoning=True),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{"role":null,"content":"42",'
        b'"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop",'
        b'"matched_stop":151645}],"usage":null}' % _HEAD,
        chunk(True, True, finish_reason="stop"),
    ),
    (
        b'{%s,"choices":[],"usage":{"prompt_tokens":12,"total_tokens":40,'
        b'"completion_tokens":28,"prompt_tokens_details":null}}' % _HEAD,
        chunk(completion_tokens=28, prompt_tokens=12),
    ),
]

_OA = (
    b'"id":"chatcmpl-Bx9","object":"chat.completion.chunk","created":1764445000,'
    b'"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_1"'
)
OPENAI = [
    (
        b'{%s,"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},'
        b'"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}' % _OA,
        chunk(),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":'
        b'[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather",'
        b'"arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],'
        b'"usage":null}' % _OA,
        chunk(True),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":'
        b'{"arguments":"{\\"city"}}]},"logprobs":null,"finish_reason":null}],"usage":null}' % _OA,
        chunk(True),
    ),
    (
        b'{%s,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],'
        b'"usage":null}' % _OA,
        chunk(finish_reason="tool_calls"),
    ),
    (
        b'{%s,"choices":[],"usage":{"prompt_tokens":80,"completion_tokens":17,"total_tokens":97,'
        b'"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},'
        b'"completion_tokens_details":{"reasoning_tokens":0}}}' % _OA,
        chunk(completion_tokens=17, prompt_tokens=80, cached_tokens=0, reasoning_tokens=0),
    ),
]

OTHER = [
    (  # vLLM's newer "reasoning" field
        b'{%s,"choices":[{"index":0,"delta":{"reasoning":"hmm"},"finish_reason":null}]}' % _HEAD,
        chunk(True, reasoning=True),
    ),
    (  # the thinking's count in the final usage (vLLM, OpenAI)
        b'{%s,"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":40,'
        b'"completion_tokens_details":{"reasoning_tokens":32}}}' % _HEAD,
        chunk(completion_tokens=40, prompt_tokens=9, reasoning_tokens=32),
    ),
    (  # /v1/completions
        b'{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
        b'[{"index":0,"text":" Hello","logprobs":null,"finish_reason":null,"stop_reason":null}],'
        b'"usage":null}',
        chunk(True, True),
    ),
    (
        b'{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
        b'[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}],"usage":null}',
        chunk(finish_reason="length"),
    ),
    (  # n=2: token-bearing if any choice is; the first non-null finish reason
        b'{%s,"choices":[{"index":0,"delta":{"content":""},"finish_reason":null},'
        b'{"index":1,"delta":{"content":"b"},"finish_reason":"stop"}]}' % _HEAD,
        chunk(True, True, finish_reason="stop"),
    ),
]

ERRORS = [
    (
        b'{"error":{"message":"maximum context length exceeded","type":"BadRequestError",'
        b'"param":null,"code":400}}',
        chunk(error="maximum context length exceeded"),
    ),
    (
        b'{"object":"error","message":"The model does not exist.","type":"NotFoundError",'
        b'"param":null,"code":404}',
        chunk(error="The model does not exist."),
    ),
    (  # TGI style
        b'{"error":"Input validation error: too long","error_type":"validation"}',
        chunk(error="Input validation error: too long"),
    ),
    (b'{"error":{"code":500}}', chunk(error='{"code":500}')),
    (b'{"error":null,"choices":[]}', chunk()),
]


@pytest.mark.parametrize(("data", "expected"), [*VLLM, *SGLANG, *OPENAI, *OTHER, *ERRORS], ids=repr)
def test_parse_chunk(data: bytes, expected: ChunkInfo) -> None:
    assert parse_chunk(data) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":'
            b'[{"index":0,"message":{"role":"assistant","content":"Hi there",'
            b'"reasoning_content":null,"tool_calls":[]},"logprobs":null,"finish_reason":"stop",'
            b'"stop_reason":null}],"usage":{"prompt_tokens":9,"total_tokens":12,'
            b'"completion_tokens":3,"prompt_tokens_details":null}}',
            chunk(True, True, finish_reason="stop", completion_tokens=3, prompt_tokens=9),
        ),
        (
            b'{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m","choices":'
            b'[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1",'
            b'"type":"function","function":{"name":"f","arguments":"{}"}}]},'
            b'"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":8}}',
            chunk(True, finish_reason="tool_calls", completion_tokens=8, prompt_tokens=9),
        ),
        (
            b'{"id":"chatcmpl-3","object":"chat.completion","created":1,"model":"m","choices":'
            b'[{"index":0,"message":{"role":"assistant","content":null,'
            b'"reasoning_content":"thinking until the budget ran out"},'
            b'"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":64}}',
            chunk(True, finish_reason="length", completion_tokens=64, prompt_tokens=9, reasoning=True),
        ),
        (
            b'{"id":"cmpl-4","object":"text_completion","created":1,"model":"m","choices":'
            b'[{"index":0,"text":" a b c","finish_reason":"length"}],'
            b'"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}',
            chunk(True, True, finish_reason="length", completion_tokens=3, prompt_tokens=5),
        ),
        (b'{"object":"error","message":"bad","code":400}', chunk(error="bad")),
    ],
)
def test_parse_response(body: bytes, expected: ChunkInfo) -> None:
    assert parse_response(body) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b'{"choices": [',
        b"[1, 2]",
        b'"a string"',
        b"null",
        b'{"choices": 5}',
        b'{"choices": "abc"}',
        b'{"choices": ["x"]}',
        b'{"choices": [{"delta": "text", "message": "text"}]}',
        b'{"choices": [{"finish_reason": 3}]}',
        b'{"usage": "x"}',
        b'{"usage": {"completion_tokens": "7"}}',
        b'{"usage": {"prompt_tokens": true}}',
        b'{"usage": {"completion_tokens": 1.5}}',
    ],
)
def test_bad_chunks(data: bytes) -> None:
    with pytest.raises(BadChunk):
        parse_chunk(data)
    with pytest.raises(BadChunk):
        parse_response(data)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(
        st.sampled_from(
            ["choices", "delta", "message", "content", "text", "usage", "error", "object",
             "message", "finish_reason", "completion_tokens", "prompt_tokens", "tool_calls",
             "reasoning", "reasoning_content", "x"]
        ),
        children,
        max_size=4,
    ),
    max_leaves=20,
)  # fmt: skip


@given(_json)
def test_any_json_is_read_or_bad_chunk(value: Any) -> None:
    data = orjson.dumps(value)
    for parse in (parse_chunk, parse_response):
        try:
            info = parse(data)
        except BadChunk:
            continue
        assert isinstance(info, ChunkInfo)
        assert info.error is None or (isinstance(info.error, str) and info.error)


@given(st.binary(max_size=64))
def test_any_bytes_are_read_or_bad_chunk(data: bytes) -> None:
    with contextlib.suppress(BadChunk):
        parse_chunk(data)


def test_cached_prompt_tokens_are_read_from_usage() -> None:
    body = (
        b'{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":4,'
        b'"prompt_tokens_details":{"cached_tokens":2000}}}'
    )
    assert parse_chunk(body).cached_tokens == 2000
    with pytest.raises(BadChunk):
        parse_chunk(
            b'{"choices":[],"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":"x"}}}'
        )


# Events close to what servers send, with now and then a value of another type or a rare key:
# the typed shortcut must read each exactly as the general reading does, or hand it over.
def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    odd = st.one_of(
        st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=2), st.just([]), st.just({})
    )
    return st.integers(0, 9).flatmap(lambda i: odd if i == 0 else value)


_text = _maybe(st.sampled_from([" in", "", "x"]))
_count = _maybe(st.integers(0, 300))
_delta = _maybe(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.just("assistant"),
            "content": _text,
            "reasoning_content": _text,
            "reasoning": _text,
            "tool_calls": _maybe(st.lists(st.fixed_dictionaries({"index": st.just(0)}), max_size=1)),
            "function_call": _maybe(st.fixed_dictionaries({"name": st.just("f")})),
        },
    )
)
_choice = _maybe(
    st.fixed_dictionaries(
        {"index": st.just(0)},
        optional={"delta": _delta, "text": _text, "logprobs": st.none(),
                  "finish_reason": _maybe(st.sampled_from(["stop", "length"]))},
    )
)  # fmt: skip
_details = st.fixed_dictionaries({}, optional={"cached_tokens": _count, "reasoning_tokens": _count})
_usage = _maybe(
    st.fixed_dictionaries(
        {},
        optional={"completion_tokens": _count, "prompt_tokens": _count, "total_tokens": _count,
                  "prompt_tokens_details": _maybe(_details), "completion_tokens_details": _maybe(_details)},
    )
)  # fmt: skip
_plain = {
    "id": st.just("chatcmpl-1"),
    "object": st.sampled_from(["chat.completion.chunk", "chat.completion.chunk", "text_completion", "error"]),
    "choices": _maybe(st.lists(_choice, min_size=1, max_size=2)),
}
_rare = {
    "error": _maybe(st.fixed_dictionaries({"message": st.just("boom")})),
    "timings": _maybe(st.fixed_dictionaries({"prompt_ms": st.just(1.5)})),
    "metrics": _maybe(st.fixed_dictionaries({"queue_time_ms": st.just(0.5)})),
}
_event = st.one_of(
    st.fixed_dictionaries(_plain, optional={"usage": _usage}),
    st.fixed_dictionaries(_plain, optional={"usage": _usage, **_rare}),
)


def _read(parse: Any, data: bytes) -> Any:
    try:
        return parse(data)
    except BadChunk:
        return BadChunk


@given(_event)
def test_the_typed_shortcut_reads_every_event_as_the_general_reading_does(event: dict[str, Any]) -> None:
    data = orjson.dumps(event)
    assert _read(event_fields, data) == _read(chunk_fields, data)


@given(st.binary(max_size=64))
def test_the_typed_shortcut_reads_any_bytes_as_the_general_reading_does(data: bytes) -> None:
    assert _read(event_fields, data) == _read(chunk_fields, data)
