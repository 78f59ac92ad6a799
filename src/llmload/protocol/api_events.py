"""The Responses API's and Anthropic Messages API's events, reduced to what chat's chunks give.

Each event of these streams is typed (``"type"`` in its JSON, the SSE ``event:`` line its echo),
so a token-bearing event is known by its type, never by matching text:

- Responses (``/v1/responses``): ``response.output_text.delta`` and ``response.refusal.delta``
  are the answer, ``response.reasoning_text.delta`` and ``response.reasoning_summary_text.delta``
  the thinking, ``response.function_call_arguments.delta`` a tool call's arguments; usage and
  the finish come with ``response.completed`` / ``response.incomplete`` (``status``,
  ``incomplete_details.reason``), a failure as ``response.failed`` or an ``error`` event.
- Messages (``/v1/messages``): ``content_block_delta`` whose ``delta.type`` is ``text_delta`` (the
  answer), ``thinking_delta`` (the thinking) or ``input_json_delta`` (a tool's input);
  ``message_start`` carries the prompt's usage, ``message_delta`` the ``stop_reason`` and the
  final ``usage.output_tokens``; an ``error`` event is a failure.

Both return ``chunks.ChunkFields``, the tuple the recorder already unpacks per event, so one
recorder serves every API. The finish is mapped to chat's words (``stop``, ``length``,
``tool_calls``), so a stage's finish reasons mean the same whatever the API.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from llmload.protocol.chunks import BadChunk, ChunkFields
from llmload.protocol.jsonvalue import JSON, JSONObject

_RESPONSES_ANSWER = frozenset({"response.output_text.delta", "response.refusal.delta"})
_RESPONSES_THINKING = frozenset({"response.reasoning_text.delta", "response.reasoning_summary_text.delta"})
_RESPONSES_END = frozenset({"response.completed", "response.incomplete", "response.failed"})
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
# Anthropic's stop reasons in chat's words
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "pause_turn": "stop",
    "refusal": "content_filter",
}
_NONE: ChunkFields = (False, False, None, None, None, None, None, None, False, None, None)


def _load(data: bytes) -> JSONObject:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadChunk(f"invalid JSON: {exc}") from None
    if type(obj) is not dict:
        raise BadChunk(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _int(value: JSON, what: str) -> int | None:
    if value is None or type(value) is int:
        return value
    raise BadChunk(f"unexpected type of {what}: {value!r}")


def _items(value: JSON) -> Sequence[JSON]:
    """A JSON array's items; nothing for anything else (a server's null or a missing field)."""
    return value if type(value) is list else ()


def responses_fields(data: bytes) -> ChunkFields:
    """One event of a streamed ``/v1/responses`` answer."""
    obj = _load(data)
    kind = obj.get("type")
    if kind in _RESPONSES_ANSWER:
        return (bool(obj.get("delta")), True, None, None, None, None, None, None, False, None, None)
    if kind in _RESPONSES_THINKING:
        return (bool(obj.get("delta")), False, None, None, None, None, None, None, True, None, None)
    if kind == "response.function_call_arguments.delta":
        return (bool(obj.get("delta")), False, None, None, None, None, None, None, False, None, None)
    if kind in _RESPONSES_END:
        response = obj.get("response")
        if type(response) is not dict:
            raise BadChunk(f"{kind} without a response object")
        # llama.cpp puts its timings beside the response object of the last event
        timings = obj.get("timings")
        _, _, finish, completion, prompt, error, cached, timings, _, thinking, metrics = response_fields(
            response, timings if type(timings) is dict else None
        )
        # the whole output again (llama.cpp, OpenAI): every token of it came in its delta already
        return (False, False, finish, completion, prompt, error, cached, timings, False, thinking, metrics)
    if kind == "error":
        return (False, False, None, None, None, _message(obj), None, None, False, None, None)
    return _NONE  # created, in_progress, output_item.added, content_part.*, *.done: no tokens


def response_fields(response: JSONObject, timings: JSONObject | None = None) -> ChunkFields:
    """A whole Responses API ``response`` object: a non-streamed body, or what a stream's last
    event carries. Its finish, usage, error, and (for a body) whether it holds output."""
    status = response.get("status")
    error = None
    if status == "failed":
        error = _message(response) or "response failed"
    finish = responses_finish(response)
    usage = response.get("usage")
    completion = prompt = cached = thinking = None
    if type(usage) is dict:
        completion = _int(usage.get("output_tokens"), "usage.output_tokens")
        prompt = _int(usage.get("input_tokens"), "usage.input_tokens")
        details = usage.get("input_tokens_details")
        if type(details) is dict:
            cached = _int(details.get("cached_tokens"), "cached_tokens")
        details = usage.get("output_tokens_details")
        if type(details) is dict:
            thinking = _int(details.get("reasoning_tokens"), "reasoning_tokens")
    has_content, reasoning = _responses_output(response)
    metrics = response.get("metrics")
    kept = metrics if type(metrics) is dict else None
    bearing = has_content or reasoning
    return bearing, has_content, finish, completion, prompt, error, cached, timings, reasoning, thinking, kept


def responses_finish(response: JSONObject) -> str | None:
    """A Responses API response's end in chat's words: ``stop`` (or ``tool_calls`` when it
    called one), ``length`` for ``max_output_tokens``; None while it is not over."""
    status = response.get("status")
    if status == "completed":
        calls = any(
            type(item) is dict and item.get("type") == "function_call"
            for item in _items(response.get("output"))
        )
        return "tool_calls" if calls else "stop"
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if type(details) is dict else None
        return _INCOMPLETE.get(str(reason), "length")
    return None


def _responses_output(response: JSONObject) -> tuple[bool, bool]:
    """Whether a whole response holds answer text (or a tool call) and reasoning."""
    answer = thought = False
    for item in _items(response.get("output")):
        if type(item) is not dict:
            continue
        kind = item.get("type")
        if kind == "message":
            answer = answer or any(
                type(part) is dict and part.get("text") for part in _items(item.get("content"))
            )
        elif kind == "function_call":
            answer = True
        elif kind == "reasoning":
            thought = True
    return answer, thought


def messages_fields(data: bytes) -> ChunkFields:
    """One event of a streamed ``/v1/messages`` answer."""
    obj = _load(data)
    kind = obj.get("type")
    if kind == "content_block_delta":
        delta = obj.get("delta")
        if type(delta) is not dict:
            raise BadChunk("content_block_delta without a delta object")
        part = delta.get("type")
        if part == "text_delta":
            return (bool(delta.get("text")), True, None, None, None, None, None, None, False, None, None)
        if part == "thinking_delta":
            return (bool(delta.get("thinking")), False, None, None, None, None, None, None, True, None, None)
        if part == "input_json_delta":
            return (
                bool(delta.get("partial_json")),
                False,
                None,
                None,
                None,
                None,
                None,
                None,
                False,
                None,
                None,
            )
        return _NONE  # signature_delta, citations: no tokens
    if kind == "message_start":
        message = obj.get("message")
        usage = message.get("usage") if type(message) is dict else None
        if type(usage) is not dict:
            return _NONE
        prompt, cached = _anthropic_prompt(usage)
        return (False, False, None, None, prompt, None, cached, None, False, None, None)
    if kind == "message_delta":
        delta, usage = obj.get("delta"), obj.get("usage")
        reason = delta.get("stop_reason") if type(delta) is dict else None
        finish = None if reason is None else STOP_REASONS.get(str(reason), str(reason))
        completion = _int(usage.get("output_tokens"), "usage.output_tokens") if type(usage) is dict else None
        return (False, False, finish, completion, None, None, None, None, False, None, None)
    if kind == "error":
        return (False, False, None, None, None, _message(obj), None, None, False, None, None)
    return _NONE  # content_block_start/stop, ping, message_stop


def message_fields(message: JSONObject) -> ChunkFields:
    """A whole non-streamed ``/v1/messages`` answer."""
    if message.get("type") == "error":
        return (False, False, None, None, None, _message(message), None, None, False, None, None)
    answer = thought = False
    for block in _items(message.get("content")):
        if type(block) is not dict:
            continue
        kind = block.get("type")
        answer = answer or (kind == "text" and bool(block.get("text"))) or kind == "tool_use"
        thought = thought or kind == "thinking"
    reason = message.get("stop_reason")
    finish = None if reason is None else STOP_REASONS.get(str(reason), str(reason))
    usage = message.get("usage")
    completion = prompt = cached = None
    if type(usage) is dict:
        completion = _int(usage.get("output_tokens"), "usage.output_tokens")
        prompt, cached = _anthropic_prompt(usage)
    return (answer or thought, answer, finish, completion, prompt, None, cached, None, thought, None, None)


def _anthropic_prompt(usage: JSONObject) -> tuple[int | None, int | None]:
    """The whole prompt, and its cached part: Anthropic's ``input_tokens`` counts only what was
    neither read from nor written to the cache, so the prompt is the sum of the three."""
    fresh = _int(usage.get("input_tokens"), "usage.input_tokens")
    read = _int(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    written = _int(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens")
    if fresh is None:
        return None, read
    return fresh + (read or 0) + (written or 0), read


def _message(obj: JSONObject) -> str:
    """An error event's message, in either API's shape (``{"error": {"message"}}`` or
    ``{"message"}`` at the top, as the Responses API's ``error`` event has it)."""
    err = obj.get("error")
    if type(err) is dict and isinstance(err.get("message"), str) and err["message"]:
        return str(err["message"])
    message = obj.get("message")
    if isinstance(message, str) and message:
        return message
    return orjson.dumps(obj).decode("utf-8", "replace")[:500]


def responses_body(body: bytes) -> ChunkFields:
    """A non-streamed ``/v1/responses`` body."""
    obj = _load(body)
    if "error" in obj and obj.get("error") and obj.get("object") != "response":
        return (False, False, None, None, None, _message(obj), None, None, False, None, None)
    timings = obj.get("timings")
    return response_fields(obj, timings if type(timings) is dict else None)


def messages_body(body: bytes) -> ChunkFields:
    """A non-streamed ``/v1/messages`` body."""
    return message_fields(_load(body))


def rerank_body(body: bytes) -> ChunkFields:
    """A ``/v1/rerank`` body: what it cost in tokens (``usage.prompt_tokens`` where the server
    counts them apart, as llama.cpp does, else ``total_tokens``, vLLM's only count)."""
    obj = _load(body)
    if obj.get("error") or obj.get("object") == "error":
        return (False, False, None, None, None, _message(obj), None, None, False, None, None)
    usage = obj.get("usage")
    counts = usage if type(usage) is dict else {}
    tokens = counts.get("prompt_tokens", counts.get("total_tokens"))
    prompt = tokens if type(tokens) is int else None
    return (False, False, None, None, prompt, None, None, None, False, None, None)
