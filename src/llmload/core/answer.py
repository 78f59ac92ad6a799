"""What a response said, read back from its payloads: text, reasoning, tool calls, usage.

Measuring needs none of this (``recorder.py`` counts tokens and stamps reads without keeping
text), so only a scenario that reads the answer pays for it: the recorder keeps the payloads,
and this module parses them once more after the request has ended, off the timed path.

A streamed answer is rebuilt from its deltas as OpenAI defines them: ``content`` and
``reasoning_content`` (or ``reasoning``) concatenate; a tool call's fragments carry its
``index`` and concatenate per index, its ``id`` and ``function.name`` arriving once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from llmload.protocol.sse import DONE


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may not parse: models err)

    def parsed_arguments(self) -> Any:
        """The arguments as JSON; raises ``orjson.JSONDecodeError`` when the model wrote none."""
        return orjson.loads(self.arguments)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    embeddings: tuple[tuple[float, ...], ...] = ()  # /v1/embeddings: one vector per input

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation for the next turn."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.to_json() for call in self.tool_calls]
        return message


def read_answer(payloads: Sequence[bytes], *, stream: bool) -> Answer:
    """Rebuild the answer from a response's payloads (SSE data events, or one JSON body).

    Payloads that are not JSON objects are skipped: the recorder has already judged the
    response, and a failed one has no answer worth rebuilding."""
    objects = [obj for obj in map(_load, payloads) if obj is not None]
    return _from_chunks(objects) if stream else _from_body(objects[0] if objects else {})


def _load(data: bytes) -> dict[str, Any] | None:
    if data == DONE:
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _from_chunks(chunks: list[dict[str, Any]]) -> Answer:
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish, usage = None, None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or ():
            finish = choice.get("finish_reason") or finish
            if "text" in choice:  # /v1/completions
                text.append(choice.get("text") or "")
                continue
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            for fragment in delta.get("tool_calls") or ():
                _merge_fragment(calls.setdefault(fragment.get("index", 0), {}), fragment)
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(_tool_call(calls[i]) for i in sorted(calls)),
        finish_reason=finish,
        usage=usage,
    )


def _merge_fragment(call: dict[str, Any], fragment: Mapping[str, Any]) -> None:
    function = fragment.get("function") or {}
    if fragment.get("id"):
        call["id"] = fragment["id"]
    if function.get("name"):
        call["name"] = call.get("name", "") + function["name"]
    call["arguments"] = call.get("arguments", "") + (function.get("arguments") or "")


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    return ToolCall(id=call.get("id", ""), name=call.get("name", ""), arguments=call.get("arguments", ""))


def _from_body(body: dict[str, Any]) -> Answer:
    if body.get("object") == "list":  # /v1/embeddings
        vectors = tuple(tuple(item.get("embedding") or ()) for item in body.get("data") or ())
        return Answer(usage=body.get("usage"), embeddings=vectors)
    choices = body.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    calls = [{"id": c.get("id", ""), **(c.get("function") or {})} for c in message.get("tool_calls") or ()]
    return Answer(
        text=(message.get("content") if message else choice.get("text")) or "",
        reasoning=message.get("reasoning_content") or message.get("reasoning") or "",
        tool_calls=tuple(_tool_call(c) for c in calls),
        finish_reason=choice.get("finish_reason"),
        usage=body.get("usage"),
    )
