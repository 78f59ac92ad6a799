"""A live replay's reply fitted to the recorded turn after it: kept where it answers the
recording, spliced where it does not, and a valid conversation either way (the simulator's
check of tool-result order says so)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from llmload.sim.request import parse_body
from llmload.workload.agent_replay import fit, order_problem

GET = "get_reservation"
TOOLS = [{"type": "function", "function": {"name": GET, "parameters": {}}}]
ASK = {"role": "user", "content": "where is my booking"}


def _reply(text: str | None, *calls: tuple[str, str, str]) -> dict[str, object]:
    reply: dict[str, object] = {"role": "assistant", "content": text}
    if calls:
        reply["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
        ]
    return reply


def _result(call_id: str, **more: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": call_id, "content": "{...}", **more}


def _valid(history: Sequence[Mapping[str, object]]) -> None:
    """The simulator serves it (a 400 raises), as OpenAI would."""
    parse_body(json.dumps({"messages": list(history)}).encode(), chat=True)


def test_a_call_that_answers_the_recording_stays_as_written_and_the_result_takes_its_id() -> None:
    reply = _reply(None, ("live-1", GET, '{"id": "X"}'))
    fitted = fit(reply, [_result("recorded-1")], TOOLS)
    assert not fitted.spliced and fitted.reply == reply
    assert fitted.messages == ({"role": "tool", "tool_call_id": "live-1", "content": "{...}"},)
    _valid([ASK, fitted.reply, *fitted.messages])


def test_a_text_reply_where_the_recording_has_text_stays() -> None:
    fitted = fit(_reply("Which one?"), [{"role": "user", "content": "the first"}], TOOLS)
    assert not fitted.spliced and fitted.reply == _reply("Which one?")
    assert fit(_reply(None), [ASK], None).reply == _reply("")  # an empty reply is still a turn


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (_reply("Let me look."), "the live reply made no call where the recording has one"),
        (
            _reply(None, ("a", GET, "{}"), ("b", GET, "{}")),
            "two calls, one result",
        ),
        (_reply(None, ("a", GET, '{"id": "X')), "cut at max_tokens inside the arguments"),
    ],
)
def test_a_reply_that_does_not_answer_the_result_is_spliced_with_the_recordings_call(
    reply: dict[str, object], why: str
) -> None:
    fitted = fit(reply, [_result("recorded-1"), {"role": "user", "content": "and?"}], TOOLS)
    assert fitted.spliced, why
    (call,) = fitted.reply["tool_calls"]  # type: ignore[misc]
    # the recording's id, the only tool offered, no arguments recorded; the reply's text kept
    assert call == {
        "id": "recorded-1",
        "type": "function",
        "function": {"name": GET, "arguments": "{}"},
    }
    assert fitted.reply["content"] == reply["content"]
    assert fitted.messages[0]["tool_call_id"] == "recorded-1"
    _valid([ASK, fitted.reply, *fitted.messages])


def test_a_result_that_names_another_function_splices_under_that_name() -> None:
    reply = _reply(None, ("a", GET, "{}"))
    fitted = fit(reply, [_result("r", name="cancel_reservation")], TOOLS)
    assert fitted.spliced and fitted.reply["tool_calls"][0]["function"]["name"] == "cancel_reservation"  # type: ignore[index]
    kept = fit(reply, [_result("r", name=GET)], TOOLS)
    assert not kept.spliced and kept.messages[0]["tool_call_id"] == "a"


def test_a_call_where_the_recording_answered_in_text_loses_the_call_and_keeps_the_text() -> None:
    reply = _reply("Checking.", ("a", GET, "{}"))
    fitted = fit(reply, [{"role": "user", "content": "never mind"}], TOOLS)
    assert fitted.spliced and fitted.reply == {"role": "assistant", "content": "Checking."}
    _valid([ASK, fitted.reply, *fitted.messages])


@pytest.mark.parametrize(
    ("messages", "answers_reply", "problem"),
    [
        ([_result("r")], True, None),  # a live session's later turn: answers the live reply
        ([_result("r")], False, "answers no call"),  # a first turn, or a recorded history
        ([ASK, _reply(None, ("c", "f", "{}")), _result("c"), ASK], False, None),
        ([ASK, _reply(None, ("c", "f", "{}")), ASK], False, "has no result"),
        ([ASK, _reply(None, ("c", "f", "{}"))], False, "has no result"),
        ([{"role": "tool", "content": "x"}], True, "needs its tool_call_id"),
    ],
)
def test_a_recorded_line_is_held_to_the_same_rule(
    messages: list[dict[str, object]], answers_reply: bool, problem: str | None
) -> None:
    found = order_problem(messages, answers_reply=answers_reply)
    assert (found is None) if problem is None else (problem in (found or "")), found
