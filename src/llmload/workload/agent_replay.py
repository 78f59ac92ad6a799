"""A live replay's next turn, fitted to the reply the server really gave.

In a live session (``assistant_responses: live``, ``message_mode: delta``) the history carries
the server's own replies, while the recording's next turn answers the reply the recorded model
gave: a ``role: tool`` result answers a call by its ``tool_call_id``. When the live reply called
no tool where the recording did, called one where it did not, made another number of calls, or
was cut at ``max_tokens`` before a call's arguments closed, the turns as they stand make a
conversation that OpenAI's API refuses (a 400) and strict chat templates fail on. So each reply
is fitted to the next turn before it joins the history, by one rule:

- **live**: the reply answers the recording one for one (as many calls as the next turn has
  leading tool results, each call's arguments whole JSON, the same function where a result
  names one), or neither has any. The reply joins the history as the server wrote it, token
  for token, and each result takes its call's id.
- **spliced**: otherwise the assistant turn the recording answers replaces it: the reply's text
  with the recording's calls (the results' ids, the function a result names or else the first
  tool offered, arguments ``{}``), or with no call where the next turn holds no result.

Every request is then a valid conversation whatever the live model said, and a session's
spliced turns count how far its replay strayed from the recording. ``order_problem`` is the
same rule applied to a recorded line before the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson


@dataclass(frozen=True, slots=True)
class Fitted:
    reply: Mapping[str, object]  # the assistant turn the history keeps
    messages: tuple[Mapping[str, object], ...]  # the recorded turn, its results addressed to it
    spliced: bool


def fit(
    reply: Mapping[str, object],
    turn: Sequence[Mapping[str, object]],
    tools: Sequence[Mapping[str, object]] | None,
) -> Fitted:
    """The live ``reply`` and the recorded ``turn`` that follows it, made one valid conversation."""
    results = _leading_results(turn)
    calls = [c for c in _items(reply.get("tool_calls")) if isinstance(c, Mapping)]
    if len(calls) == len(results) and all(_answers(c, r) for c, r in zip(calls, results, strict=True)):
        if not calls:
            said = reply if reply.get("content") is not None else {**reply, "content": ""}
            return Fitted(said, tuple(turn), spliced=False)
        addressed = tuple({**r, "tool_call_id": c["id"]} for c, r in zip(calls, results, strict=True))
        return Fitted(reply, (*addressed, *turn[len(results) :]), spliced=False)
    text = reply.get("content")
    if not results:
        return Fitted({"role": "assistant", "content": text or ""}, tuple(turn), spliced=True)
    made = [_call(r["tool_call_id"], _name(r, tools)) for r in results]
    spliced = {"role": "assistant", "content": text or None, "tool_calls": made}
    return Fitted(spliced, tuple(turn), spliced=True)


def order_problem(messages: Sequence[Mapping[str, object]], *, answers_reply: bool) -> str | None:
    """What breaks the rule of tool results in recorded ``messages`` (each answers a call of the
    assistant message before it, and every call is answered), or None. ``answers_reply``: their
    leading results answer the reply before them (a live session's later turn)."""
    pending: set[str] | None = None  # the calls still unanswered; None: no call is open
    leading = answers_reply
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                return f"messages[{i}]: a tool result needs its tool_call_id"
            if leading:
                continue
            if pending is None or call_id not in pending:
                return f"messages[{i}]: tool result {call_id!r} answers no call of the assistant before it"
            pending.discard(call_id)
            continue
        leading = False
        if pending:
            return f"messages[{i}]: the assistant's call {sorted(pending)[0]!r} before it has no result"
        pending = set(_call_ids(message)) if message.get("role") == "assistant" else None
    if pending:
        return f"the assistant's call {sorted(pending)[0]!r} has no result"
    return None


def _leading_results(turn: Sequence[Mapping[str, object]]) -> list[Mapping[str, object]]:
    results = []
    for message in turn:
        if message.get("role") != "tool":
            break
        results.append(message)
    return results


def _answers(call: Mapping[str, object], result: Mapping[str, object]) -> bool:
    """Whether ``result`` can answer the live ``call``: a whole call, of the function the result
    names (when it names one)."""
    function = call.get("function")
    if not isinstance(call.get("id"), str) or not isinstance(function, Mapping):
        return False
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, str):
        return False
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError:  # cut at max_tokens inside the call
        return False
    return result.get("name") in (None, name)


def _call(call_id: object, name: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _name(result: Mapping[str, object], tools: Sequence[Mapping[str, object]] | None) -> str:
    """The function a spliced call names: the result's own, else the first tool offered (the
    recording does not say which it called)."""
    named = result.get("name")
    if isinstance(named, str) and named:
        return named
    for tool in tools or ():
        function = tool.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
    return "tool"


def _call_ids(message: Mapping[str, object]) -> list[str]:
    ids = []
    for call in _items(message.get("tool_calls")):
        call_id = call.get("id") if isinstance(call, Mapping) else None
        if isinstance(call_id, str):
            ids.append(call_id)
    return ids


def _items(value: object) -> Sequence[object]:
    return value if isinstance(value, list | tuple) else ()
