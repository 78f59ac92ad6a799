"""Agentic traces: recorded sessions replayed turn by turn (``--agent-trace FILE``).

The format is AIPerf's session form of the Mooncake trace (its "trace replay" docs), JSONL with
one line per turn, the published agent datasets' form (e.g. customer-service agent traces on
Hugging Face)::

    {"session_id": "s1", "message_mode": "delta", "messages": [<system>, <user>],
     "output_length": 512, "timestamp": 0, "tools": [...]}
    {"session_id": "s1", "message_mode": "delta", "messages": [<user or tool>],
     "output_length": 512, "delay": 2000}

- ``messages``: the turn's chat messages; ``message_mode`` says what they are. ``delta`` (the
  agentic form): only what the turn adds, after the history so far, which holds the replies the
  server really gave; ``history`` (the default): the whole conversation as recorded, sent as it
  is, so the server's live replies are not carried.
- ``output_length``: the turn's ``max_tokens``; ``delay``: milliseconds after the previous
  turn's reply before this turn goes (the recorded user's or tool's time); ``tools``: the tool
  definitions, kept for later turns of a delta session until a turn gives new ones.
- ``timestamp`` is read and ignored: sessions here are run by a closed loop of users (one per
  concurrent session), so a capacity search can vary how many run at once.

Turns are grouped by ``session_id`` in file order. Everything is checked before the run starts;
a bad line stops it with its line number. Lines with ``input_length`` and no ``messages``
(synthetic lengths) are not agentic turns and are refused with a pointer to ``--trace``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.errors import ConfigError

OPTION = "--agent-trace"
_MODES = frozenset({"delta", "history"})


@dataclass(frozen=True, slots=True)
class TraceTurn:
    messages: tuple[Mapping[str, object], ...]
    max_tokens: int | None
    delay_s: float  # after the previous turn's reply; 0 for the first
    tools: tuple[Mapping[str, object], ...] | None  # None: the session's current ones


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
    modes: dict[str, str] = {}
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
        session = str(entry.get("session_id") or f"line-{number}")
        mode = str(entry.get("message_mode") or "history")
        if mode not in _MODES:
            raise ConfigError(OPTION, where, f"message_mode {mode!r}: must be delta or history")
        if modes.setdefault(session, mode) != mode:
            raise ConfigError(OPTION, where, f"session {session!r} mixes delta and history turns")
        turns.setdefault(session, []).append(_turn(entry, where, first=session not in turns))
    if not turns:
        raise ConfigError(OPTION, path, "no session in the file")
    return tuple(TraceSession(s, modes[s] == "delta", tuple(t)) for s, t in turns.items())


def _turn(entry: Mapping[str, object], where: str, *, first: bool) -> TraceTurn:
    messages = entry.get("messages")
    if messages is None:
        problem = "a turn needs its messages (a trace of lengths alone replays with --trace)"
        raise ConfigError(OPTION, where, problem)
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
    )


def session_for(sessions: Sequence[TraceSession], user_index: int, count: int) -> TraceSession:
    """The session a user runs as its ``count``-th: users start at different sessions and walk
    the file, so concurrent users replay different ones and every session gets its turn."""
    return sessions[(user_index * 7919 + count) % len(sessions)]
