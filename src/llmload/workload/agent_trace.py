"""Agentic traces: recorded sessions replayed turn by turn (``--agent-trace FILE``).

The format is AIPerf's session form of the Mooncake trace (its "trace replay" docs), JSONL with
one line per turn, the published agent datasets' form (e.g. customer-service agent traces on
Hugging Face)::

    {"session_id": "s1", "assistant_responses": "live", "messages": [<system>, <user>],
     "output_length": 512, "timestamp": 0, "tools": [...], "extra": {"temperature": 0}}
    {"session_id": "s1", "assistant_responses": "live", "messages": [<user or tool>],
     "output_length": 512, "delay": 2000}

- ``messages``: the turn's chat messages; ``assistant_responses`` says what they are (AIPerf's
  current name; ``message_mode`` is its earlier one, read too, and the two must agree where a
  line gives both). ``live`` (``delta``, the agentic form): only what the turn adds, after the
  history so far, which holds the replies the server really gave (fitted to the recording by
  ``agent_replay.py``); ``recorded`` (``history``, the default): the whole conversation as
  recorded, sent as it is, so the server's live replies are not carried.
- ``output_length``: the turn's ``max_tokens``; ``delay``: milliseconds after the previous
  turn's reply before this turn goes (the recorded user's or tool's time); ``tools``: the tool
  definitions, kept for later turns of a live session until a turn gives new ones; ``extra``:
  fields put into this turn's body (its sampling: ``temperature``, ``top_p``, ``seed``,
  ``tool_choice``, ...), over ``--extra-body``'s.
- ``timestamp`` is read and ignored: sessions here are run by a closed loop of users (one per
  concurrent session), so a capacity search can vary how many run at once.

Turns are grouped by ``session_id`` in file order. Everything is checked before the run starts;
a bad line stops it with its line number, and so does a field this reader does not know (a
newer AIPerf's field would otherwise be dropped without a word). Lines with ``input_length``
and no ``messages`` (synthetic lengths) are not agentic turns and are refused with a pointer to
``--trace``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.errors import ConfigError
from llmload.workload.agent_replay import order_problem

OPTION = "--agent-trace"
_MODES = {"delta": True, "history": False}  # message_mode: whether the session is live
_RESPONSES = {"live": True, "recorded": False}  # assistant_responses (any case), AIPerf's name
_READ = frozenset(
    {"session_id", "messages", "message_mode", "assistant_responses", "output_length", "delay",
     "timestamp", "tools", "extra", "type"}
)  # fmt: skip
_NOT_REPLAYED = {
    "input_length": "lengths alone replay with --trace",
    "hash_ids": "lengths alone replay with --trace",
    "text_input": "give the turn as messages",
    "payload": "give the turn as messages",
    "context_mode": "say assistant_responses live or recorded",
}
# Fields of the body that the trace's own fields or llmload set: extra may not replace them.
_OWN = {
    "messages": "the turn's messages",
    "input": "the turn's messages",
    "tools": "the line's tools",
    "max_tokens": "output_length",
    "max_completion_tokens": "output_length",
    "model": "--model",
    "stream": "--no-stream",
    "stream_options": "the run's own",
}


@dataclass(frozen=True, slots=True)
class TraceTurn:
    messages: tuple[Mapping[str, object], ...]
    max_tokens: int | None
    delay_s: float  # after the previous turn's reply; 0 for the first
    tools: tuple[Mapping[str, object], ...] | None  # None: the session's current ones
    extra: Mapping[str, object] | None = None  # this turn's body fields (AIPerf's extra)


@dataclass(frozen=True, slots=True)
class TraceSession:
    session_id: str
    delta: bool  # turns add to a history that carries the live replies
    turns: tuple[TraceTurn, ...]


def load_agent_trace(path: str) -> tuple[TraceSession, ...]:
    """Every session of the file, in the order of their first lines."""
    if not path:
        return ()
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(OPTION, path, f"cannot read it: {exc.strerror or exc}") from None
    turns: dict[str, list[TraceTurn]] = {}
    modes: dict[str, bool] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(OPTION, where, f"not JSON: {exc}") from None
        if not isinstance(entry, dict):
            raise ConfigError(OPTION, where, "each line must be a JSON object")
        _known(entry, where)
        session = str(entry.get("session_id") or f"line-{number}")
        live = _live(entry, where)
        if modes.setdefault(session, live) != live:
            raise ConfigError(OPTION, where, f"session {session!r} mixes delta and history turns")
        first = session not in turns
        turn = _turn(entry, where, first=first)
        problem = order_problem(turn.messages, answers_reply=live and not first)
        if problem:
            raise ConfigError(OPTION, where, problem)
        turns.setdefault(session, []).append(turn)
    if not turns:
        raise ConfigError(OPTION, path, "no session in the file")
    return tuple(TraceSession(s, modes[s], tuple(t)) for s, t in turns.items())


def _known(entry: Mapping[str, object], where: str) -> None:
    if "messages" not in entry and "input_length" in entry:
        problem = "a turn needs its messages (a trace of lengths alone replays with --trace)"
        raise ConfigError(OPTION, where, problem)
    for name in entry:
        if name in _NOT_REPLAYED:
            raise ConfigError(OPTION, where, f"{name} is not replayed here: {_NOT_REPLAYED[name]}")
        if name not in _READ:
            fields = ", ".join(sorted(_READ))
            raise ConfigError(OPTION, where, f"unknown field {name!r} (a turn has {fields})")
    if entry.get("type", "mooncake_trace") != "mooncake_trace":
        raise ConfigError(OPTION, where, f"type {entry['type']!r}: only mooncake_trace lines replay here")


def _live(entry: Mapping[str, object], where: str) -> bool:
    """Whether the line's session carries the live replies: ``message_mode`` and
    ``assistant_responses`` read, and held to agree where both are given."""
    mode, responses = entry.get("message_mode"), entry.get("assistant_responses")
    live = None
    if mode is not None:
        if mode not in _MODES:
            raise ConfigError(OPTION, where, f"message_mode {mode!r}: must be delta or history")
        live = _MODES[str(mode)]
    if responses is not None:
        said = responses.lower() if isinstance(responses, str) else None
        if said not in _RESPONSES:
            raise ConfigError(OPTION, where, f"assistant_responses {responses!r}: must be live or recorded")
        if live is not None and live != _RESPONSES[said]:
            problem = f"message_mode {mode!r} and assistant_responses {responses!r} disagree"
            raise ConfigError(OPTION, where, problem)
        live = _RESPONSES[said]
    return bool(live)


def _turn(entry: Mapping[str, object], where: str, *, first: bool) -> TraceTurn:
    messages = entry.get("messages")
    if messages is None:
        raise ConfigError(OPTION, where, "a turn needs its messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        raise ConfigError(OPTION, where, 'messages must be a list of {"role": ..., "content": ...}')
    length = entry.get("output_length")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
        raise ConfigError(OPTION, where, "output_length must be a whole number of tokens, 1 or more")
    delay = entry.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay < float("inf"):
        raise ConfigError(OPTION, where, "delay must be milliseconds, 0 or more")
    tools = entry.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise ConfigError(OPTION, where, "tools must be a list of tool definitions")
    return TraceTurn(
        messages=tuple(messages),
        max_tokens=length,
        delay_s=0.0 if first else delay / 1000,
        tools=None if tools is None else tuple(tools),
        extra=_extra(entry.get("extra"), where),
    )


def _extra(extra: object, where: str) -> Mapping[str, object] | None:
    if extra is None:
        return None
    if not isinstance(extra, dict):
        raise ConfigError(OPTION, where, "extra must be an object of body fields (temperature, top_p, ...)")
    for name in extra:
        if name in _OWN:
            raise ConfigError(OPTION, where, f"extra may not set {name!r}: {_OWN[name]} does")
    return extra


def session_for(sessions: Sequence[TraceSession], user_index: int, count: int) -> TraceSession:
    """The session a user runs as its ``count``-th: users start at different sessions and walk
    the file, so concurrent users replay different ones and every session gets its turn."""
    return sessions[(user_index * 7919 + count) % len(sessions)]
