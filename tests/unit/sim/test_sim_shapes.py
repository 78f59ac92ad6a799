"""The simulator's answers with a form: each parses once its words are put in their place."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmload.sim.shapes import Shape, answer_shape, escaped

WORDS = " the of and"
LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "exact": {"type": "boolean"},
            },
        },
    },
}
OTHER = {"type": "function", "function": {"name": "other", "parameters": {}}}
ASK = [{"role": "user", "content": "x"}]


def filled(shape: Shape | None) -> Any:
    assert shape is not None
    return orjson.loads(shape.open + WORDS + shape.close)


def test_offered_tools_are_called_the_first_by_default() -> None:
    shape = answer_shape({"messages": ASK, "tools": [LOOKUP, OTHER]}, "r1")
    assert shape is not None and shape.tool == ("call_r1", "lookup")
    assert filled(shape) == {"query": WORDS, "limit": 1, "unit": "c", "exact": True}


@pytest.mark.parametrize(
    ("choice", "last_role", "called"),
    [
        ("none", "user", None),
        ("auto", "tool", None),  # with the tool's result, a model answers in text
        ("required", "tool", "lookup"),
        ({"type": "function", "function": {"name": "other"}}, "user", "other"),
        ({"type": "function", "function": {"name": "missing"}}, "user", None),
    ],
)
def test_tool_choice_decides(choice: Any, last_role: str, called: str | None) -> None:
    messages = [*ASK, {"role": last_role, "content": "42"}]
    shape = answer_shape({"messages": messages, "tools": [LOOKUP, OTHER], "tool_choice": choice}, "r")
    assert (shape.tool[1] if shape is not None and shape.tool else None) == called


def test_json_object_and_json_schema() -> None:
    assert filled(answer_shape({"response_format": {"type": "json_object"}}, "r")) == {"answer": WORDS}
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}, "tags": {"type": "array"}}}
    form = {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}
    assert filled(answer_shape({"response_format": form}, "r")) == {"ok": True, "tags": [], "text": WORDS}


def test_plain_text_otherwise() -> None:
    assert answer_shape({"messages": ASK}, "r") is None
    assert answer_shape({"response_format": {"type": "text"}}, "r") is None


def test_escaped_pieces_rejoin_to_the_form_inside_a_json_string() -> None:
    shape = answer_shape({"response_format": {"type": "json_object"}}, "r")
    assert shape is not None
    streamed = b'{"content":"' + escaped(shape.open) + b" the" + escaped(shape.close) + b'"}'
    assert orjson.loads(orjson.loads(streamed)["content"]) == {"answer": " the"}
