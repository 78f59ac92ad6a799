"""What a response said, read back from its payloads: text, reasoning, tool calls, usage, and
an embedding's vectors or a rerank's order.

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

import orjson

from llmload.protocol.jsonvalue import JSON, JSONObject
from llmload.protocol.sse import DONE


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may not parse: models err)

    def parsed_arguments(self) -> JSON:
        """The arguments as JSON; raises ``orjson.JSONDecodeError`` when the model wrote none."""
        value: JSON = orjson.loads(self.arguments)
        return value

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class Ranked:
    """One document of a rerank answer: its place in the request's list, and its score."""

    index: int
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: JSONObject | None = None
    embeddings: tuple[tuple[float, ...], ...] = ()  # /v1/embeddings: one vector per input
    ranking: tuple[Ranked, ...] = ()  # /v1/rerank: the documents best first, as the server ordered them
    response_id: str | None = None  # the Responses API's (previous_response_id) or Messages' id

    @property
    def message(self) -> dict[str, JSON]:
        """The assistant message to append to the conversation for the next turn."""
        message: dict[str, JSON] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.to_json() for call in self.tool_calls]
        return message


def read_answer(payloads: Sequence[bytes], *, stream: bool) -> Answer:
    """Rebuild the answer from a response's payloads (SSE data events, or one JSON body) of
    chat, completions or embeddings (``api_answer.py`` reads the newer APIs').

    Payloads that are not JSON objects are skipped, and so are parts of the wrong JSON type:
    the recorder has already judged the response, and a failed one has no answer worth
    rebuilding."""
    objects = load_objects(payloads)
    return _from_chunks(objects) if stream else _from_body(objects[0] if objects else {})


def load_objects(payloads: Sequence[bytes]) -> list[JSONObject]:
    """The payloads that are JSON objects, in order."""
    return [obj for obj in map(_load, payloads) if obj is not None]


def _load(data: bytes) -> JSONObject | None:
    if data == DONE:
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _object(value: JSON) -> JSONObject:
    return value if isinstance(value, Mapping) else {}


def _objects(value: JSON) -> list[JSONObject]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _text(value: JSON) -> str:
    return value if isinstance(value, str) else ""


def _usage(value: JSON) -> JSONObject | None:
    return value if isinstance(value, Mapping) and value else None


def _from_chunks(chunks: list[JSONObject]) -> Answer:
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage: JSONObject | None = None
    for chunk in chunks:
        usage = _usage(chunk.get("usage")) or usage
        for choice in _objects(chunk.get("choices")):
            finish = _text(choice.get("finish_reason")) or finish
            if "text" in choice:  # /v1/completions
                text.append(_text(choice.get("text")))
                continue
            delta = _object(choice.get("delta"))
            text.append(_text(delta.get("content")))
            reasoning.append(_text(delta.get("reasoning_content")) or _text(delta.get("reasoning")))
            for fragment in _objects(delta.get("tool_calls")):
                index = fragment.get("index", 0)
                _merge_fragment(calls.setdefault(index if isinstance(index, int) else 0, {}), fragment)
    return Answer(
        text="".join(text),
        reasoning="".join(reasoning),
        tool_calls=tuple(_tool_call(calls[i]) for i in sorted(calls)),
        finish_reason=finish,
        usage=usage,
    )


def _merge_fragment(call: dict[str, str], fragment: JSONObject) -> None:
    function = _object(fragment.get("function"))
    if _text(fragment.get("id")):
        call["id"] = _text(fragment.get("id"))
    if _text(function.get("name")):
        call["name"] = call.get("name", "") + _text(function.get("name"))
    call["arguments"] = call.get("arguments", "") + _text(function.get("arguments"))


def _ranked(item: Mapping[str, JSON]) -> Ranked | None:
    index, score = item.get("index"), item.get("relevance_score", item.get("score"))
    if type(index) is not int or not isinstance(score, int | float) or isinstance(score, bool):
        return None
    return Ranked(index, float(score))


def _tool_call(call: Mapping[str, JSON]) -> ToolCall:
    return ToolCall(
        id=_text(call.get("id")), name=_text(call.get("name")), arguments=_text(call.get("arguments"))
    )


def _from_body(body: JSONObject) -> Answer:
    if "results" in body:  # /v1/rerank
        ranked = [_ranked(item) for item in _objects(body.get("results"))]
        return Answer(usage=_usage(body.get("usage")), ranking=tuple(r for r in ranked if r is not None))
    if body.get("object") == "list":  # /v1/embeddings
        vectors = tuple(
            tuple(float(x) for x in _numbers(item.get("embedding"))) for item in _objects(body.get("data"))
        )
        return Answer(usage=_usage(body.get("usage")), embeddings=vectors)
    choice = (_objects(body.get("choices")) or [{}])[0]
    message = _object(choice.get("message"))
    calls = [
        {"id": c.get("id", ""), **_object(c.get("function"))} for c in _objects(message.get("tool_calls"))
    ]
    return Answer(
        text=_text(message.get("content") if message else choice.get("text")),
        reasoning=_text(message.get("reasoning_content")) or _text(message.get("reasoning")),
        tool_calls=tuple(_tool_call(c) for c in calls),
        finish_reason=_text(choice.get("finish_reason")) or None,
        usage=_usage(body.get("usage")),
    )


def _numbers(value: JSON) -> list[float]:
    if not isinstance(value, list):
        return []
    return [x for x in value if isinstance(x, int | float) and not isinstance(x, bool)]
