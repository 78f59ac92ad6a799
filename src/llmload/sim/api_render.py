"""The Responses API's and Anthropic Messages API's answers: their typed SSE events, and whole
bodies, in the shapes vLLM (and OpenAI, Anthropic) write them.

A renderer here has ``ChunkRenderer``'s methods, so a generation writes any API the same way:
``role`` opens the answer (``response.created`` and its output item; ``message_start`` and the
first content block), ``text`` and ``reasoning`` are one delta event each, ``usage`` closes it
with the usage (``response.completed``; ``message_delta`` and ``message_stop``), and there is no
``[DONE]`` (``done`` is empty). A reasoning model's thinking is its own output item (Responses)
or content block (Messages) before the answer's, closed when the answer's first token comes.
"""

from __future__ import annotations

from types import MappingProxyType

import orjson

from llmload.sim.jsonvalue import JSON

# chat's finish reasons in Anthropic's words
_FINISH = MappingProxyType({"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"})


def _event(kind: str, payload: dict[str, JSON]) -> bytes:
    return b"event: %b\ndata: %b\n\n" % (kind.encode(), orjson.dumps({"type": kind, **payload}))


def _delta_close(data: bytes) -> bytes:
    return data + b'"}\n\n'


class ResponsesRenderer:
    """The events of one streamed ``/v1/responses`` answer."""

    __slots__ = (
        "_answer_index",
        "_answer_item",
        "_head",
        "_id",
        "_model",
        "_opened",
        "_prompt_tokens",
        "_seq",
        "_thinking",
    )

    opens = True
    done = b""

    def __init__(self, *, response_id: str, created: int, model: str, prompt_tokens: int) -> None:
        self._id, self._model, self._prompt_tokens = response_id, model, prompt_tokens
        self._head: dict[str, JSON] = {
            "id": response_id,
            "object": "response",
            "created_at": created,
            "model": model,
        }
        self._seq = 0
        self._thinking = False  # a reasoning item is open
        self._opened = False  # the message item is open
        self._answer_item = f"msg_{response_id}"
        self._answer_index = 0  # the message item's place in the output: 1 after a reasoning item

    def _next(self, kind: str, payload: dict[str, JSON]) -> bytes:
        self._seq += 1
        return _event(kind, {**payload, "sequence_number": self._seq})

    def role(self, sent_ns: int, cached_tokens: int = 0) -> bytes:
        response: dict[str, JSON] = {**self._head, "status": "in_progress", "output": []}
        return self._next("response.created", {"response": response}) + self._next(
            "response.in_progress", {"response": response}
        )

    def _open_answer(self) -> bytes:
        out = b""
        if self._thinking:
            self._thinking = False
            thought: JSON = {"type": "reasoning", "id": f"rs_{self._id}", "summary": []}
            out += self._next("response.output_item.done", {"output_index": 0, "item": thought})
        index = self._answer_index = 1 if out else 0
        item: dict[str, JSON] = {
            "type": "message",
            "id": self._answer_item,
            "role": "assistant",
            "content": [],
        }
        out += self._next("response.output_item.added", {"output_index": index, "item": item})
        part: JSON = {"type": "output_text", "text": "", "annotations": []}
        out += self._next(
            "response.content_part.added",
            {"item_id": self._answer_item, "output_index": index, "content_index": 0, "part": part},
        )
        self._opened = True
        return out

    def text(
        self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int, first: bool = False
    ) -> bytes:
        out = self._open_answer() if not self._opened else b""
        payload: dict[str, JSON] = {
            "item_id": self._answer_item,
            "output_index": self._answer_index,
            "content_index": 0,
            "delta": text.decode(),
        }
        return out + self._next("response.output_text.delta", payload)

    def reasoning(self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int) -> bytes:
        out = b""
        if not self._thinking:
            self._thinking = True
            item: JSON = {"type": "reasoning", "id": f"rs_{self._id}", "summary": []}
            out += self._next("response.output_item.added", {"output_index": 0, "item": item})
        payload: dict[str, JSON] = {
            "item_id": f"rs_{self._id}",
            "output_index": 0,
            "content_index": 0,
            "delta": text.decode(),
        }
        return out + self._next("response.reasoning_text.delta", payload)

    def usage(
        self,
        completion_tokens: int,
        sent_ns: int,
        cached_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        *,
        metrics: dict[str, float | None] | None = None,
        finish_reason: str = "stop",
    ) -> bytes:
        out = b""
        if self._opened:
            item: JSON = {"id": self._answer_item, "type": "message"}
            out += self._next("response.output_item.done", {"output_index": self._answer_index, "item": item})
        usage = responses_usage(self._prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens)
        status = "incomplete" if finish_reason == "length" else "completed"
        response: dict[str, JSON] = {**self._head, "status": status, "usage": usage}
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        if metrics is not None:
            response["metrics"] = {k: v for k, v in metrics.items() if v is not None}
        return out + self._next(f"response.{status}", {"response": response})

    def error(self, message: str, code: int) -> bytes:
        return self._next("error", {"code": str(code), "message": message, "param": None})


def responses_usage(
    prompt_tokens: int, completion_tokens: int, cached_tokens: int | None, reasoning_tokens: int | None
) -> dict[str, JSON]:
    return {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens or 0},
        "output_tokens": completion_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens or 0},
        "total_tokens": prompt_tokens + completion_tokens,
    }


class MessagesRenderer:
    """The events of one streamed ``/v1/messages`` answer."""

    __slots__ = ("_block", "_id", "_model", "_prompt_tokens", "_text_open", "_thinking")

    opens = True
    done = b""

    def __init__(self, *, response_id: str, model: str, prompt_tokens: int) -> None:
        self._id, self._model, self._prompt_tokens = response_id, model, prompt_tokens
        self._block = -1  # the open content block's index
        self._thinking = False
        self._text_open = False

    def role(self, sent_ns: int, cached_tokens: int = 0) -> bytes:
        message: dict[str, JSON] = {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # the prompt's tokens as Anthropic counts them: what was read from the cache apart
            "usage": {**messages_usage(self._prompt_tokens, 0, cached_tokens), "output_tokens": 1},
        }
        return _event("message_start", {"message": message})

    def _start(self, block: dict[str, JSON]) -> bytes:
        out = _event("content_block_stop", {"index": self._block}) if self._block >= 0 else b""
        self._block += 1
        return out + _event("content_block_start", {"index": self._block, "content_block": block})

    def text(
        self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int, first: bool = False
    ) -> bytes:
        out = b""
        if not self._text_open:
            self._text_open = True
            out = self._start({"type": "text", "text": ""})
        delta: dict[str, JSON] = {"type": "text_delta", "text": text.decode()}
        return out + _event("content_block_delta", {"index": self._block, "delta": delta})

    def reasoning(self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int) -> bytes:
        out = b""
        if not self._thinking:
            self._thinking = True
            out = self._start({"type": "thinking", "thinking": ""})
        delta: dict[str, JSON] = {"type": "thinking_delta", "thinking": text.decode()}
        return out + _event("content_block_delta", {"index": self._block, "delta": delta})

    def usage(
        self,
        completion_tokens: int,
        sent_ns: int,
        cached_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        *,
        metrics: dict[str, float | None] | None = None,
        finish_reason: str = "stop",
    ) -> bytes:
        out = _event("content_block_stop", {"index": self._block}) if self._block >= 0 else b""
        delta: dict[str, JSON] = {
            "stop_reason": _FINISH.get(finish_reason, "end_turn"),
            "stop_sequence": None,
        }
        usage: dict[str, JSON] = {"output_tokens": completion_tokens}
        out += _event("message_delta", {"delta": delta, "usage": usage})
        return out + _event("message_stop", {})

    def error(self, message: str, code: int) -> bytes:
        return _event("error", {"error": {"type": "api_error", "message": message}})


def messages_usage(prompt_tokens: int, completion_tokens: int, cached_tokens: int | None) -> dict[str, JSON]:
    cached = cached_tokens or 0
    return {
        "input_tokens": prompt_tokens - cached,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": completion_tokens,
    }


def responses_body(
    *,
    response_id: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int,
    reasoning: tuple[str, int] | None,
    metrics: dict[str, float | None] | None,
) -> bytes:
    output: list[JSON] = []
    if reasoning is not None:
        content: list[JSON] = [{"type": "reasoning_text", "text": reasoning[0]}]
        output.append({"type": "reasoning", "id": f"rs_{response_id}", "summary": [], "content": content})
    part: JSON = {"type": "output_text", "text": text, "annotations": []}
    output.append({"type": "message", "id": f"msg_{response_id}", "role": "assistant", "status": "completed",
                   "content": [part]})  # fmt: skip
    status = "incomplete" if finish_reason == "length" else "completed"
    body: dict[str, JSON] = {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "model": model,
        "status": status,
        "output": output,
        "usage": responses_usage(prompt_tokens, completion_tokens, cached_tokens, reasoning and reasoning[1]),
    }
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    if metrics is not None:
        body["metrics"] = metrics
    return orjson.dumps(body)


def messages_body(
    *,
    response_id: str,
    model: str,
    text: str,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int,
    reasoning: tuple[str, int] | None,
) -> bytes:
    content: list[JSON] = []
    if reasoning is not None:
        content.append({"type": "thinking", "thinking": reasoning[0], "signature": ""})
    content.append({"type": "text", "text": text})
    return orjson.dumps(
        {
            "id": response_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": _FINISH.get(finish_reason, "end_turn"),
            "stop_sequence": None,
            "usage": messages_usage(prompt_tokens, completion_tokens, cached_tokens),
        }
    )


def messages_error_body(message: str, status: int) -> bytes:
    """Anthropic's error shape: ``{"type": "error", "error": {"type", "message"}}``."""
    kind = {400: "invalid_request_error", 429: "rate_limit_error", 503: "overloaded_error"}.get(
        status, "api_error"
    )
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})
