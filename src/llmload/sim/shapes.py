"""Answers with a form: a tool call when the request offers tools, JSON when it asks for JSON.

A scenario that reads its answers (an agent that runs the tool it was asked to call, a check
that the JSON parses) needs a server whose answers have that form. The simulator keeps its
timing model and its token count: the answer's words are the same generated tokens, placed
inside one string of the form, so the form's own characters ride on the first and last token.

- a tool call, when ``tools`` is given and ``tool_choice`` allows one: the function named by
  ``tool_choice``, else the first tool; with ``auto`` (the default) not when the last message
  is a tool's result, as a model answers in text once it has what it asked for. Its arguments
  fill the function's ``parameters`` schema;
- JSON, for ``response_format`` ``json_object`` (``{"answer": "<words>"}``) or
  ``json_schema`` (the schema's properties filled: the words go in its first string property,
  and in ``"text"`` where it has none).

Filling a schema: strings the words (or an enum's first value), integers their ``minimum`` or
0, numbers the same, booleans ``true``, arrays ``[]``, objects ``{}``. Enough to parse and to
have the schema's required keys and types, not to satisfy every constraint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import orjson

from llmload.sim.jsonvalue import JSON, JSONObject

_SLOT = "\x00llmload-words\x00"  # stands in for the words while the form is rendered


class Shape(NamedTuple):
    open: str  # what precedes the first word
    close: str  # what follows the last
    tool: tuple[str, str] | None  # a tool call's (id, function name); None: the text is content


def answer_shape(body: JSONObject, response_id: str) -> Shape | None:
    """The form the answer to this chat request takes, or None for plain text."""
    tool = _tool(body)
    if tool is not None:
        name, parameters = tool
        open_, close = _around_words(_fill(parameters))
        return Shape(open_, close, (f"call_{response_id}", name))
    form = body.get("response_format")
    if not isinstance(form, Mapping):
        return None
    if form.get("type") == "json_object":
        return Shape(*_around_words({"answer": _SLOT}), None)
    if form.get("type") == "json_schema":
        spec = form.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        return Shape(*_around_words(_fill(schema if isinstance(schema, Mapping) else {})), None)
    return None


def _tool(body: JSONObject) -> tuple[str, JSONObject] | None:
    functions: dict[str, JSONObject] = {}
    for tool in _items(body.get("tools")):
        f = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(f, Mapping) and isinstance(f.get("name"), str):
            functions[str(f["name"])] = f
    if not functions:
        return None
    choice = body.get("tool_choice", "auto")
    if choice == "none":
        return None
    if isinstance(choice, Mapping):
        chosen = choice.get("function")
        wanted = chosen.get("name") if isinstance(chosen, Mapping) else None
        name = wanted if isinstance(wanted, str) else ""
        function = functions.get(name) if isinstance(wanted, str) else None
    else:
        messages = _items(body.get("messages")) or [{}]
        last = messages[-1] if isinstance(messages[-1], Mapping) else {}
        if choice != "required" and last.get("role") == "tool":
            return None
        name, function = next(iter(functions.items()))
    if function is None:
        return None
    parameters = function.get("parameters")
    return name, parameters if isinstance(parameters, Mapping) else {}


def _items(value: JSON) -> Sequence[JSON]:
    """A field that should be an array, as one (a string or an object is not)."""
    return value if isinstance(value, list | tuple) else ()


def _fill(schema: JSONObject) -> dict[str, JSON]:
    """An object of the schema's shape whose first string property holds the words."""
    properties = schema.get("properties")
    out: dict[str, JSON] = {}
    placed = False
    for key, given in properties.items() if isinstance(properties, Mapping) else ():
        prop = given if isinstance(given, Mapping) else {}
        kind = prop.get("type")
        if kind == "string" and not placed and "enum" not in prop:
            out[key], placed = _SLOT, True
        else:
            out[key] = _value(prop)
    if not placed:
        out["text"] = _SLOT
    return out


def _value(prop: JSONObject) -> JSON:
    enum = _items(prop.get("enum"))
    if enum:
        return enum[0]
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return prop.get("minimum", 0)
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return _fill(prop) if prop.get("properties") else {}
    return ""


def _around_words(form: JSONObject) -> tuple[str, str]:
    # The words are the last key's value or not: either way the slot splits the JSON in two.
    text = orjson.dumps(form).decode()
    before, after = text.split(orjson.dumps(_SLOT).decode(), 1)
    return before + '"', '"' + after


def escaped(text: str) -> bytes:
    """``text`` as it appears inside a JSON string: what a streamed delta carries."""
    return orjson.dumps(text)[1:-1]
