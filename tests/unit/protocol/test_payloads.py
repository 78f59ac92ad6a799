"""Request bodies: what is sent, and that ``extra`` always has the last word."""

from __future__ import annotations

from types import MappingProxyType

import orjson

from llmload.protocol.payloads import chat_body, completions_body

MESSAGES = [{"role": "user", "content": "Hi"}]


def test_streaming_chat_body() -> None:
    body = orjson.loads(
        chat_body("m", MESSAGES, max_tokens=128, stream=True, ignore_eos=True, min_tokens=128)
    )
    assert body == {
        "model": "m",
        "messages": MESSAGES,
        "max_tokens": 128,
        "min_tokens": 128,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "ignore_eos": True,
    }


def test_plain_chat_body_sends_only_what_was_asked() -> None:
    body = orjson.loads(chat_body("m", MESSAGES, max_tokens=None, stream=False, ignore_eos=False))
    assert body == {"model": "m", "messages": MESSAGES, "stream": False}


def test_completions_body() -> None:
    body = orjson.loads(completions_body("m", "Once", max_tokens=8, stream=True, ignore_eos=False))
    assert body == {
        "model": "m",
        "prompt": "Once",
        "max_tokens": 8,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }


def test_extra_is_merged_last_and_wins() -> None:
    extra = {
        "temperature": 0.0,
        "seed": 7,
        "chat_template_kwargs": {"enable_thinking": False},
        "max_tokens": 5,
        "stream_options": {"include_usage": True},
    }
    body = orjson.loads(chat_body("m", MESSAGES, max_tokens=64, stream=True, ignore_eos=False, extra=extra))
    assert body["max_tokens"] == 5
    assert body["stream_options"] == {"include_usage": True}
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert (body["temperature"], body["seed"]) == (0.0, 7)


def test_read_only_mappings_and_tuples_serialise() -> None:
    messages = (MappingProxyType({"role": "user", "content": ("a", "b")}),)
    extra = MappingProxyType({"logit_bias": MappingProxyType({"1": 2})})
    body = orjson.loads(chat_body("m", messages, max_tokens=1, stream=False, ignore_eos=False, extra=extra))
    assert body["messages"] == [{"role": "user", "content": ["a", "b"]}]
    assert body["logit_bias"] == {"1": 2}


def test_caller_inputs_are_not_mutated() -> None:
    extra = {"seed": 1}
    messages = [{"role": "user", "content": "x"}]
    chat_body("m", messages, max_tokens=1, stream=True, ignore_eos=True, extra=extra)
    assert extra == {"seed": 1}
    assert messages == [{"role": "user", "content": "x"}]
