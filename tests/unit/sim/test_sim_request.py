"""Parsing request bodies: what is counted, defaulted and refused."""

from __future__ import annotations

import json

import pytest

from llmload.sim.badrequest import BadRequest
from llmload.sim.request import DEFAULT_MAX_TOKENS, parse_body
from llmload.sim.tokens import chat_prompt_tokens
from llmload.workload.images import ImagePool, ImageSpec


def _chat(**fields: object) -> bytes:
    body: dict[str, object] = {"model": "m", "messages": [{"role": "user", "content": "a b c"}]}
    body.update(fields)
    return json.dumps(body).encode()


def test_chat_defaults() -> None:
    request = parse_body(_chat(), chat=True)
    assert request.prompt_tokens == 3 + 3 + 3
    assert request.max_tokens == DEFAULT_MAX_TOKENS
    assert (request.stream, request.ignore_eos, request.include_usage) == (False, False, False)


def test_max_completion_tokens_wins() -> None:
    assert parse_body(_chat(max_tokens=5, max_completion_tokens=7), chat=True).max_tokens == 7
    assert parse_body(_chat(max_tokens=5), chat=True).max_tokens == 5


def test_stream_options_only_count_when_streaming() -> None:
    options = {"include_usage": True, "continuous_usage_stats": True}
    streamed = parse_body(_chat(stream=True, stream_options=options), chat=True)
    assert (streamed.include_usage, streamed.continuous_usage) == (True, True)
    plain = parse_body(_chat(stream_options=options), chat=True)
    assert (plain.include_usage, plain.continuous_usage) == (False, False)


def test_content_parts_and_many_messages() -> None:
    image = ImagePool(ImageSpec(1, ((60, 30),), "png")).pick(0, 0)[0].url
    part = {"type": "image_url", "image_url": {"url": image}}
    messages = [
        {"role": "system", "content": "be kind"},
        {"role": "user", "content": [{"type": "text", "text": "one two"}, part]},
        {"role": "assistant", "content": None},
    ]
    body = parse_body(_chat(messages=messages), chat=True)
    # 4 words, 3 messages' template, the reply's opening, and a 60x30 image's 3 x 2 patches
    assert (body.prompt_tokens, body.images) == (4 + 3 * 3 + 3 + 6, 1)
    messages[1]["content"] = [{"type": "image_url"}]  # no URL: nothing the simulator can read
    with pytest.raises(BadRequest, match="data:image"):
        parse_body(_chat(messages=messages), chat=True)


@pytest.mark.parametrize(("prompt", "tokens"), [("a b  c\nd", 4), (["a b", "c"], 3), ([1, 2, 3, 4, 5], 5)])
def test_completion_prompts(prompt: object, tokens: int) -> None:
    body = json.dumps({"prompt": prompt, "max_tokens": 3}).encode()
    assert parse_body(body, chat=False).prompt_tokens == tokens


def test_the_prompt_sequence_is_what_the_prefill_is_charged_for() -> None:
    messages = [{"role": "system", "content": "be kind"}, {"role": "user", "content": "a b c"}]
    request = parse_body(_chat(messages=messages), chat=True)
    assert request.prompt == [
        "<|im_start|>", "system", "\n", "be", "kind",
        "<|im_start|>", "user", "\n", "a", "b", "c",
        "<|im_start|>", "assistant", "\n",
    ]  # fmt: skip
    assert len(request.prompt) == request.prompt_tokens == chat_prompt_tokens(5, 2)
    ids = parse_body(json.dumps({"prompt": [7, 8, 9]}).encode(), chat=False)
    assert ids.prompt == [7, 8, 9]
    words = parse_body(json.dumps({"prompt": ["a b", "c"]}).encode(), chat=False)
    assert words.prompt == ["a", "b", "c"]


def test_sim_fields() -> None:
    request = parse_body(_chat(sim_fault="stall_mid", sim_stall_ms=20, sim_fault_after=2), chat=True)
    assert (request.fault, request.stall_ms, request.fault_after) == ("stall_mid", 20, 2)


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        (b"{not json", None),
        (b"[]", None),
        (_chat(messages=[]), "messages"),
        (_chat(max_tokens=0), "max_tokens"),
        (_chat(max_tokens="9"), "max_tokens"),
        (_chat(max_tokens=3, min_tokens=4), "min_tokens"),
        (_chat(n=2), "n"),
        (_chat(stream="yes"), "stream"),
        (_chat(seed=1.5), "seed"),
        (_chat(messages=["hi"]), "messages"),
    ],
)
def test_bad_requests(raw: bytes, param: str | None) -> None:
    with pytest.raises(BadRequest) as info:
        parse_body(raw, chat=True)
    assert info.value.param == param


def test_bad_completion_prompt() -> None:
    with pytest.raises(BadRequest):
        parse_body(b'{"prompt": {"a": 1}}', chat=False)


def test_tokenize_answers_vllms_and_llama_cpps_shapes() -> None:
    from fractions import Fraction

    from llmload.sim.request import parse_body, tokenize_answer

    status, vllm = tokenize_answer(b'{"model": "m", "prompt": "a b c d e f g h i j"}', Fraction(13, 10))
    assert status == 200 and vllm["count"] == 13 == len(vllm["tokens"])
    _, llama = tokenize_answer(b'{"content": "a b c d e f g h i j"}', Fraction(13, 10))
    assert llama == {"tokens": vllm["tokens"]}
    _, chat = tokenize_answer(b'{"messages": [{"role": "user", "content": "a b"}]}')
    assert chat["count"] == 2 + 6  # the template, as a chat request's usage counts it
    body = b'{"messages": [{"role": "user", "content": "a b c d e f g h i j"}]}'
    assert parse_body(body, True, per_word=Fraction(13, 10)).prompt_tokens == 13 + 6
    with pytest.raises(BadRequest):
        tokenize_answer(b'{"text": "a"}')


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _calling(*ids: str) -> dict[str, object]:
    return {"role": "assistant", "content": None, "tool_calls": [_call(i) for i in ids]}


def _result(call_id: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": call_id, "content": "done"}


ASK = {"role": "user", "content": "book it"}
MORE = {"role": "user", "content": "and?"}


@pytest.mark.parametrize(
    "messages",
    [
        [ASK, _calling("a"), _result("a")],
        [ASK, _calling("a", "b"), _result("b"), _result("a"), MORE],
        [ASK, {"role": "assistant", "content": "plain"}, MORE],
    ],
)
def test_tool_results_that_answer_their_calls_are_served(messages: list[object]) -> None:
    assert parse_body(_chat(messages=messages), chat=True).prompt_tokens > 0


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        # a result after a reply that called no tool: what a replay of live replies must not send
        (
            [ASK, {"role": "assistant", "content": "sure"}, _result("a")],
            r"messages\[2\]: a message with role 'tool'",
        ),
        ([ASK, _result("a")], r"messages\[1\]"),
        ([ASK, _calling("live"), _result("recorded")], "'recorded' answers none"),
        (
            [ASK, _calling("a"), MORE],
            "followed by tool messages answering each 'tool_call_id'; these have none: a",
        ),
        ([ASK, _calling("a")], "no tool messages for: a"),
    ],
)
def test_a_tool_result_out_of_order_is_a_400_as_openai_answers(messages: list[object], problem: str) -> None:
    with pytest.raises(BadRequest, match=problem) as raised:
        parse_body(_chat(messages=messages), chat=True)
    assert raised.value.param == "messages"
