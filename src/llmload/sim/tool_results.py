"""The order of tool calls and their results in a chat conversation, checked as OpenAI checks it.

A ``role: tool`` message answers a call of the assistant message before it (other results may
come between them) by its ``tool_call_id``, and every call of an assistant message is answered
before the conversation goes on. OpenAI's API answers anything else with a 400, and so does the
simulator: a client that replays recorded turns against live replies (``--agent-trace``) must
not send a result whose call the live model never made.
"""

from __future__ import annotations

from llmload.sim.badrequest import BadRequest
from llmload.sim.jsonvalue import JSON, JSONObject


def check_tool_results(messages: list[JSON]) -> None:
    """Raise ``BadRequest`` where a tool result answers no call, or a call has no result."""
    open_calls: list[str] | None = None  # the calls still unanswered; None: no call is open
    for i, given in enumerate(messages):
        message = given if isinstance(given, dict) else {}
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if open_calls is None or call_id not in open_calls:
                raise BadRequest(
                    f"messages[{i}]: a message with role 'tool' must answer a call of the preceding "
                    f"assistant message with 'tool_calls' (tool_call_id {call_id!r} answers none)",
                    "messages",
                )
            open_calls.remove(str(call_id))
            continue
        if open_calls:
            raise BadRequest(
                "an assistant message with 'tool_calls' must be followed by tool messages answering each "
                f"'tool_call_id'; these have none: {', '.join(open_calls)}",
                "messages",
            )
        open_calls = _calls(message) if role == "assistant" else None
    if open_calls:
        raise BadRequest(
            f"an assistant message with 'tool_calls' has no tool messages for: {', '.join(open_calls)}",
            "messages",
        )


def _calls(message: JSONObject) -> list[str] | None:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    return [str(c.get("id")) for c in calls if isinstance(c, dict)]
