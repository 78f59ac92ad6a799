"""A Responses API or Anthropic Messages API request as the chat request it amounts to.

The simulator serves every API with one generation path, so each newer body is translated to
chat's fields first: its conversation as ``messages`` (system text first, tool calls and their
results as the assistant's and the tool's turns), its limit as ``max_tokens``, its tools and
``tool_choice`` in chat's form (so ``shapes.py`` answers a tool call the same way), and usage
always on (both APIs send it unasked). What each API requires is checked as its servers check it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from llmload.sim.badrequest import BadRequest
from llmload.sim.jsonvalue import JSON, JSONObject


def as_chat(body: JSONObject, api: str) -> dict[str, JSON]:
    out: dict[str, JSON] = {
        k: v for k, v in body.items() if k not in ("messages", "max_tokens", "tools", "tool_choice")
    }
    if api == "responses":
        out["messages"] = _responses_conversation(body)
        if "max_output_tokens" in body:
            out["max_tokens"] = body["max_output_tokens"]
        tools = [_responses_tool(t) for t in _items(body.get("tools"))]
        choice = _responses_choice(body.get("tool_choice", "auto"))
    else:
        if "max_tokens" not in body:
            raise BadRequest("max_tokens: Field required", "max_tokens")
        out["messages"] = _messages_conversation(body)
        out["max_tokens"] = body["max_tokens"]
        tools = [_messages_tool(t) for t in _items(body.get("tools"))]
        choice = _messages_choice(body.get("tool_choice"))
    if tools:
        out["tools"], out["tool_choice"] = [t for t in tools if t is not None], choice
    out["stream_options"] = {"include_usage": True}
    return out


def _items(value: JSON) -> Sequence[JSON]:
    return value if isinstance(value, list) else ()


def _text(value: JSON) -> str:
    """What a tool's output or a block's content says, as text: a string, or its text parts."""
    if isinstance(value, str):
        return value
    return " ".join(str(p.get("text", "")) for p in _items(value) if isinstance(p, Mapping))


def _function(name: JSON, parameters: JSON) -> JSON:
    if not isinstance(name, str):
        return None
    return {"type": "function", "function": {"name": name, "parameters": parameters or {}}}


def _responses_conversation(body: JSONObject) -> list[JSON]:
    given = body.get("input")
    if isinstance(given, str):
        items: list[JSON] = [{"role": "user", "content": given}]
    elif isinstance(given, list) and given:
        items = [turn for item in given if (turn := _responses_turn(item)) is not None]
    else:
        raise BadRequest("input must be a string or a non-empty list of items", "input")
    instructions = body.get("instructions")
    system: list[JSON] = (
        [{"role": "system", "content": instructions}] if isinstance(instructions, str) else []
    )
    return [*system, *items]


def _responses_turn(item: JSON) -> JSON:
    """One input item as a chat message: a message as it is, a ``function_call`` as the
    assistant's turn (its arguments are what the model wrote), its ``function_call_output`` as
    the tool's."""
    if not isinstance(item, Mapping):
        return None
    kind = item.get("type")
    if kind == "function_call":
        return {"role": "assistant", "content": _text(item.get("arguments"))}
    if kind == "function_call_output":
        return {"role": "tool", "content": _text(item.get("output"))}
    return dict(item) if "role" in item else None


def _responses_tool(tool: JSON) -> JSON:
    # Responses' tools are flat: {"type": "function", "name", "parameters"}
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return None
    return _function(tool.get("name"), tool.get("parameters"))


def _responses_choice(choice: JSON) -> JSON:
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return choice


def _messages_conversation(body: JSONObject) -> list[JSON]:
    text = body.get("system")
    if isinstance(text, list):
        text = _text(text)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: at least one message is required", "messages")
    system: list[JSON] = [{"role": "system", "content": text}] if isinstance(text, str) else []
    return [*system, *(_messages_turn(m) for m in messages)]


def _messages_turn(message: JSON) -> JSON:
    """A message whose blocks are all ``tool_result`` is the tool's turn; ``tool_use`` blocks
    read as the JSON the model wrote, ``tool_result`` blocks as their content."""
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        return message
    blocks = [b for b in _items(message.get("content")) if isinstance(b, Mapping)]
    parts: list[JSON] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_use":
            parts.append({"type": "text", "text": orjson.dumps(block.get("input", {})).decode()})
        elif kind == "tool_result":
            parts.append({"type": "text", "text": _text(block.get("content"))})
        else:
            parts.append(dict(block))
    results = bool(blocks) and all(b.get("type") == "tool_result" for b in blocks)
    return {"role": "tool" if results else message.get("role"), "content": parts}


def _messages_tool(tool: JSON) -> JSON:
    # Anthropic's tools: {"name", "description", "input_schema"}
    if not isinstance(tool, Mapping):
        return None
    return _function(tool.get("name"), tool.get("input_schema"))


def _messages_choice(choice: JSON) -> JSON:
    """``auto``, ``any`` (a call is required), ``tool`` (that one) and ``none``, in chat's words."""
    kind = choice.get("type") if isinstance(choice, Mapping) else "auto"
    if kind == "tool" and isinstance(choice, Mapping):
        return {"type": "function", "function": {"name": choice.get("name")}}
    return {"any": "required", "none": "none"}.get(str(kind), "auto")
