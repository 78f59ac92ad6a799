"""Reading an answer back from its payloads: what a scenario's ``Reply`` says it was told."""

from __future__ import annotations

from typing import Any

import orjson

from llmload.core.answer import Answer, Ranked, ToolCall, read_answer
from llmload.protocol.api_events import rerank_body


def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    return orjson.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})


def test_streamed_text_and_reasoning_concatenate_in_order() -> None:
    payloads = [
        event({"role": "assistant", "content": ""}),
        event({"reasoning_content": "think "}),
        event({"reasoning": "more"}),  # the other engines' name for the same field
        event({"content": "Hello"}),
        event({"content": " world"}, "stop"),
        orjson.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
        b"[DONE]",
    ]
    answer = read_answer(payloads, stream=True)
    assert (answer.text, answer.reasoning, answer.finish_reason) == ("Hello world", "think more", "stop")
    assert answer.usage == {"prompt_tokens": 3, "completion_tokens": 4}
    assert answer.message == {"role": "assistant", "content": "Hello world"}


def test_tool_call_fragments_join_per_index() -> None:
    first = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": ""}}
    payloads = [
        event({"tool_calls": [first]}),
        event({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "add", "arguments": "{"}}]}),
        event({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]}),
        event({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]}),
        event({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}, "tool_calls"),
    ]
    answer = read_answer(payloads, stream=True)
    assert answer.tool_calls == (
        ToolCall("call_a", "lookup", '{"q": "x"}'),
        ToolCall("call_b", "add", "{}"),
    )
    assert answer.tool_calls[0].parsed_arguments() == {"q": "x"}
    assert answer.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "add", "arguments": "{}"}},
        ],
    }


def test_a_whole_chat_body_with_a_tool_call() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    answer = read_answer([orjson.dumps(body)], stream=False)
    assert answer.tool_calls == (ToolCall("c1", "f", "{}"),) and answer.text == ""
    assert answer.finish_reason == "tool_calls"


def test_completions_text_streamed_and_whole() -> None:
    chunks = [orjson.dumps({"choices": [{"text": t, "finish_reason": None}]}) for t in ("Once", " upon")]
    assert read_answer(chunks, stream=True).text == "Once upon"
    body = orjson.dumps({"choices": [{"text": "Once upon", "finish_reason": "length"}]})
    assert read_answer([body], stream=False) == Answer(text="Once upon", finish_reason="length")


def test_embeddings_give_one_vector_per_input() -> None:
    body = {
        "object": "list",
        "data": [{"index": 0, "embedding": [0.5, 0.5]}, {"index": 1, "embedding": [1.0, 0.0]}],
        "usage": {"prompt_tokens": 8, "total_tokens": 8},
    }
    answer = read_answer([orjson.dumps(body)], stream=False)
    assert answer.embeddings == ((0.5, 0.5), (1.0, 0.0))
    assert answer.usage == {"prompt_tokens": 8, "total_tokens": 8}


def test_a_rerank_keeps_the_servers_order_and_its_token_count() -> None:
    # vLLM's shape (total_tokens only, "document" with its text) and llama.cpp's (its own
    # prompt_tokens, no documents); a result without a number is dropped, not guessed
    vllm = {"usage": {"total_tokens": 12}, "results": [{"index": 2, "relevance_score": 0.9,
            "document": {"text": "x"}}, {"index": 0, "relevance_score": 0.1}, {"index": 1}]}  # fmt: skip
    ranked = [{"index": 1, "relevance_score": -1.8}, {"index": 0, "relevance_score": 0.36}]
    llama = {"object": "list", "usage": {"prompt_tokens": 17, "total_tokens": 17}, "results": ranked}
    assert read_answer([orjson.dumps(vllm)], stream=False).ranking == (Ranked(2, 0.9), Ranked(0, 0.1))
    assert read_answer([orjson.dumps(llama)], stream=False).ranking == (Ranked(1, -1.8), Ranked(0, 0.36))
    assert rerank_body(orjson.dumps(vllm))[4] == 12 and rerank_body(orjson.dumps(llama))[4] == 17
    refused = {"error": {"code": 501, "message": "start it with --reranking", "type": "not_supported_error"}}
    assert rerank_body(orjson.dumps(refused))[5] == "start it with --reranking"


def test_what_is_not_a_json_object_is_skipped() -> None:
    payloads = [b"not json", b"[1, 2]", event({"content": "ok"}), b"[DONE]"]
    assert read_answer(payloads, stream=True).text == "ok"
    assert read_answer([], stream=False) == Answer()
