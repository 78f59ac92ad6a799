"""The answer of a Responses API or Messages API request, read back from its payloads (as
``answer.py`` reads chat's): text, reasoning, tool calls, the finish, usage, and the response's
id, which a Responses scenario passes on as ``previous_response_id``.

Streamed answers are rebuilt from their typed deltas; whole ones from their ``output`` items
(Responses) or ``content`` blocks (Messages). Finish reasons are mapped to chat's words, as the
recorder maps them (``protocol/api_events.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from llmload.core.answer import Answer, ToolCall, load_objects
from llmload.protocol.api_events import STOP_REASONS, responses_finish
from llmload.protocol.jsonvalue import JSON, JSONObject


def _text(value: JSON) -> str:
    return value if isinstance(value, str) else ""


def _list(value: JSON) -> Sequence[JSON]:
    return value if isinstance(value, list) else ()


def read_responses(payloads: Sequence[bytes], *, stream: bool) -> Answer:
    objects = load_objects(payloads)
    if not stream:
        return _response(objects[0] if objects else {})
    text, reasoning = [], []
    calls: dict[str, dict[str, str]] = {}  # by item id, in order of arrival
    last: JSONObject = {}
    for event in objects:
        kind = event.get("type")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            text.append(_text(event.get("delta")))
        elif kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
            reasoning.append(_text(event.get("delta")))
        elif kind == "response.output_item.added":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                call = {"id": _text(item.get("call_id")), "name": _text(item.get("name")), "arguments": ""}
                calls[_text(item.get("id"))] = call
        elif kind == "response.function_call_arguments.delta":
            growing = calls.get(_text(event.get("item_id")))
            if growing is not None:
                growing["arguments"] += _text(event.get("delta"))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = event.get("response")
            last = response if isinstance(response, dict) else {}
    usage = last.get("usage")
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in calls.values()),
        finish_reason=responses_finish(last) if last else None,
        usage=usage if isinstance(usage, dict) else None,
        response_id=_text(last.get("id")) or None,
    )


def response_id_of(payload: bytes) -> str | None:
    """The id a Responses answer gives itself in its first payload: a stream's
    ``response.created`` event, or the whole body."""
    objects = load_objects([payload])
    outer = objects[0] if objects else {}
    inner = outer.get("response")
    return _text((inner if isinstance(inner, dict) else outer).get("id")) or None


def _response(response: JSONObject) -> Answer:
    text, reasoning, calls = [], [], []
    for item in _list(response.get("output")):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            text += [_text(p.get("text")) for p in _list(item.get("content")) if isinstance(p, dict)]
        elif kind == "reasoning":
            parts = [*_list(item.get("content")), *_list(item.get("summary"))]
            reasoning += [_text(p.get("text")) for p in parts if isinstance(p, dict)]
        elif kind == "function_call":
            calls.append(
                ToolCall(_text(item.get("call_id")), _text(item.get("name")), _text(item.get("arguments")))
            )
    usage = response.get("usage")
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(calls),
        finish_reason=responses_finish(response),
        usage=usage if isinstance(usage, dict) else None,
        response_id=_text(response.get("id")) or None,
    )


def read_messages(payloads: Sequence[bytes], *, stream: bool) -> Answer:
    objects = load_objects(payloads)
    if not stream:
        return _message(objects[0] if objects else {})
    text, reasoning = [], []
    calls: dict[int, dict[str, str]] = {}  # tool_use blocks by their index
    message_id, reason, usage = None, None, None
    for event in objects:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict):
                message_id = _text(message.get("id")) or None
        elif kind == "content_block_start":
            block = event.get("content_block")
            index = event.get("index")
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(index, int):
                calls[index] = {
                    "id": _text(block.get("id")),
                    "name": _text(block.get("name")),
                    "arguments": "",
                }
        elif kind == "content_block_delta":
            delta = event.get("delta")
            if not isinstance(delta, dict):
                continue
            part = delta.get("type")
            if part == "text_delta":
                text.append(_text(delta.get("text")))
            elif part == "thinking_delta":
                reasoning.append(_text(delta.get("thinking")))
            elif part == "input_json_delta":
                index = event.get("index")
                if isinstance(index, int) and index in calls:
                    calls[index]["arguments"] += _text(delta.get("partial_json"))
        elif kind == "message_delta":
            delta, given = event.get("delta"), event.get("usage")
            if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                reason = str(delta["stop_reason"])
            usage = given if isinstance(given, dict) else usage
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in calls.values()),
        finish_reason=None if reason is None else STOP_REASONS.get(reason, reason),
        usage=usage,
        response_id=message_id,
    )


def _message(message: JSONObject) -> Answer:
    text, reasoning, calls = [], [], []
    for block in _list(message.get("content")):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text.append(_text(block.get("text")))
        elif kind == "thinking":
            reasoning.append(_text(block.get("thinking")))
        elif kind == "tool_use":
            arguments = orjson.dumps(block.get("input", {})).decode()
            calls.append(ToolCall(_text(block.get("id")), _text(block.get("name")), arguments))
    reason = message.get("stop_reason")
    usage = message.get("usage")
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(calls),
        finish_reason=None if reason is None else STOP_REASONS.get(str(reason), str(reason)),
        usage=usage if isinstance(usage, dict) else None,
        response_id=_text(message.get("id")) or None,
    )
