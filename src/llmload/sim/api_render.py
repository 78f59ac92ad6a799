"""The Responses API's and Anthropic Messages API's answers: their typed SSE events, and whole
bodies, in the shapes vLLM (and OpenAI, Anthropic) write them.

A renderer here has ``ChunkRenderer``'s methods, so a generation writes any API the same way:
``role`` opens the answer (``response.created`` and its output item; ``message_start`` and the
first content block), ``text`` and ``reasoning`` are one delta event each, ``usage`` closes it
with the usage (``response.completed``; ``message_delta`` and ``message_stop``), and there is no
``[DONE]`` (``done`` is empty). A reasoning model's thinking is its own output item (Responses)
or content block (Messages) before the answer's, closed when the answer's first token comes.
With ``tool`` (a call's id and function name) the answer's words are the call's arguments: a
``function_call`` item (Responses) or a ``tool_use`` block (Messages) instead of text.

The text a generation hands over is already escaped for a JSON string (chat's renderer writes it
as it is), so a delta is spliced into its event's JSON, not encoded again.
"""

from __future__ import annotations

from types import MappingProxyType

import orjson

from llmload.sim.jsonvalue import JSON

# chat's finish reasons in Anthropic's words
_FINISH = MappingProxyType({"length": "max_tokens", "stop": "end_turn", "tool_calls": "tool_use"})


def _event(kind: str, payload: dict[str, JSON]) -> bytes:
    return b"event: %b\ndata: %b\n\n" % (kind.encode(), orjson.dumps({"type": kind, **payload}))


def _spliced(kind: str, payload: dict[str, JSON], text: bytes, depth: int) -> bytes:
    """An event whose last field, ``depth`` objects down, is the JSON string ``text``: the
    payload is encoded with that string empty and the escaped text goes between its quotes."""
    data = orjson.dumps({"type": kind, **payload})
    cut = len(data) - depth - 2
    return b"event: %b\ndata: %b%b%b\n\n" % (kind.encode(), data[:cut], text, data[cut:])


def _unescaped(text: bytes) -> str:
    return str(orjson.loads(b'"' + text + b'"'))


class ResponsesRenderer:
    """The events of one streamed ``/v1/responses`` answer. Its last events repeat the output
    whole (``output_item.done``, ``response.completed``'s ``output``), as OpenAI and vLLM write
    them, so the renderer keeps what it wrote."""

    __slots__ = (
        "_answer_index",
        "_answer_item",
        "_head",
        "_id",
        "_opened",
        "_prompt_tokens",
        "_said",
        "_seq",
        "_thinking",
        "_thought",
        "_tool",
    )

    opens = True
    done = b""

    def __init__(
        self,
        *,
        response_id: str,
        created: int,
        model: str,
        prompt_tokens: int,
        tool: tuple[str, str] | None = None,
    ) -> None:
        self._id, self._prompt_tokens, self._tool = response_id, prompt_tokens, tool
        self._head: dict[str, JSON] = {
            "id": response_id,
            "object": "response",
            "created_at": created,
            "model": model,
        }
        self._seq = 0
        self._thinking = False  # a reasoning item is open
        self._opened = False  # the answer's item is open
        self._said: list[bytes] = []  # the answer's deltas (a call's arguments), escaped
        self._thought: list[bytes] = []  # the reasoning's
        self._answer_item = f"msg_{response_id}" if tool is None else f"fc_{response_id}"
        self._answer_index = 0  # the answer item's place in the output: 1 after a reasoning item

    def _next(self, kind: str, payload: dict[str, JSON]) -> bytes:
        self._seq += 1
        return _event(kind, {**payload, "sequence_number": self._seq})

    def _next_delta(self, kind: str, payload: dict[str, JSON], text: bytes) -> bytes:
        self._seq += 1
        return _spliced(kind, {**payload, "sequence_number": self._seq, "delta": ""}, text, 0)

    def _reasoning_item(self) -> dict[str, JSON]:
        content: list[JSON] = [{"type": "reasoning_text", "text": _unescaped(b"".join(self._thought))}]
        return {"type": "reasoning", "id": f"rs_{self._id}", "summary": [], "content": content}

    def _answer(self, status: str) -> dict[str, JSON]:
        text = _unescaped(b"".join(self._said))
        if self._tool is not None:
            call_id, name = self._tool
            return {"type": "function_call", "id": self._answer_item, "call_id": call_id, "name": name,
                    "arguments": text, "status": status}  # fmt: skip
        content: list[JSON] = [{"type": "output_text", "text": text, "annotations": []}] if text else []
        return {"type": "message", "id": self._answer_item, "role": "assistant", "status": status,
                "content": content}  # fmt: skip

    def role(self, sent_ns: int, cached_tokens: int = 0) -> bytes:
        response: dict[str, JSON] = {**self._head, "status": "in_progress", "output": []}
        return self._next("response.created", {"response": response}) + self._next(
            "response.in_progress", {"response": response}
        )

    def _close_reasoning(self) -> bytes:
        self._thinking = False
        return self._next("response.output_item.done", {"output_index": 0, "item": self._reasoning_item()})

    def _open_answer(self) -> bytes:
        out = self._close_reasoning() if self._thinking else b""
        index = self._answer_index = 1 if self._thought else 0
        self._opened = True
        out += self._next(
            "response.output_item.added", {"output_index": index, "item": self._answer("in_progress")}
        )
        if self._tool is not None:
            return out
        part: JSON = {"type": "output_text", "text": "", "annotations": []}
        return out + self._next(
            "response.content_part.added",
            {"item_id": self._answer_item, "output_index": index, "content_index": 0, "part": part},
        )

    def text(
        self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int, first: bool = False
    ) -> bytes:
        out = self._open_answer() if not self._opened else b""
        self._said.append(text)
        where: dict[str, JSON] = {"item_id": self._answer_item, "output_index": self._answer_index}
        if self._tool is not None:
            return out + self._next_delta("response.function_call_arguments.delta", where, text)
        return out + self._next_delta("response.output_text.delta", {**where, "content_index": 0}, text)

    def reasoning(self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int) -> bytes:
        out = b""
        if not self._thinking:
            self._thinking = True
            item: JSON = {"type": "reasoning", "id": f"rs_{self._id}", "summary": []}
            out += self._next("response.output_item.added", {"output_index": 0, "item": item})
        self._thought.append(text)
        payload: dict[str, JSON] = {"item_id": f"rs_{self._id}", "output_index": 0, "content_index": 0}
        return out + self._next_delta("response.reasoning_text.delta", payload, text)

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
        out = self._close_reasoning() if self._thinking else b""
        output: list[JSON] = [self._reasoning_item()] if self._thought else []
        if self._opened:
            index, answer = self._answer_index, self._answer("completed")
            if self._tool is not None:
                done: dict[str, JSON] = {"item_id": self._answer_item, "output_index": index,
                                         "arguments": answer["arguments"]}  # fmt: skip
                out += self._next("response.function_call_arguments.done", done)
            out += self._next("response.output_item.done", {"output_index": index, "item": answer})
            output.append(answer)
        usage = responses_usage(self._prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens)
        status = "incomplete" if finish_reason == "length" else "completed"
        response: dict[str, JSON] = {**self._head, "status": status, "output": output, "usage": usage}
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

    __slots__ = ("_block", "_id", "_model", "_prompt_tokens", "_text_open", "_thinking", "_tool")

    opens = True
    done = b""

    def __init__(
        self, *, response_id: str, model: str, prompt_tokens: int, tool: tuple[str, str] | None = None
    ) -> None:
        self._id, self._model, self._prompt_tokens = response_id, model, prompt_tokens
        self._tool = tool
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
        tool = self._tool
        if not self._text_open:
            self._text_open = True
            block: dict[str, JSON] = (
                {"type": "text", "text": ""}
                if tool is None
                else {"type": "tool_use", "id": tool[0], "name": tool[1], "input": {}}
            )
            out = self._start(block)
        delta: dict[str, JSON] = (
            {"type": "text_delta", "text": ""}
            if tool is None
            else {"type": "input_json_delta", "partial_json": ""}
        )
        return out + _spliced("content_block_delta", {"index": self._block, "delta": delta}, text, 1)

    def reasoning(self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int) -> bytes:
        out = b""
        if not self._thinking:
            self._thinking = True
            out = self._start({"type": "thinking", "thinking": ""})
        delta: dict[str, JSON] = {"type": "thinking_delta", "thinking": ""}
        return out + _spliced("content_block_delta", {"index": self._block, "delta": delta}, text, 1)

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
    tool: tuple[str, str] | None = None,
) -> bytes:
    output: list[JSON] = []
    if reasoning is not None:
        content: list[JSON] = [{"type": "reasoning_text", "text": reasoning[0]}]
        output.append({"type": "reasoning", "id": f"rs_{response_id}", "summary": [], "content": content})
    if tool is not None:
        call_id, name = tool
        output.append({"type": "function_call", "id": f"fc_{response_id}", "call_id": call_id, "name": name,
                       "arguments": text, "status": "completed"})  # fmt: skip
    else:
        part: JSON = {"type": "output_text", "text": text, "annotations": []}
        output.append({"type": "message", "id": f"msg_{response_id}", "role": "assistant",
                       "status": "completed", "content": [part]})  # fmt: skip
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
    tool: tuple[str, str] | None = None,
) -> bytes:
    content: list[JSON] = []
    if reasoning is not None:
        content.append({"type": "thinking", "thinking": reasoning[0], "signature": ""})
    if tool is not None:  # the words close their JSON even when cut at max_tokens (``shapes.py``)
        content.append({"type": "tool_use", "id": tool[0], "name": tool[1], "input": orjson.loads(text)})
    else:
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
