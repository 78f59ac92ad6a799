"""Agentic sessions: turns whose prompts grow by the server's real replies and tool results,
with sub-agents that run in parallel and join back.

A session starts from the workload's prompt (with ``--prefix-groups``, behind the shared system
prompt every agent of a group carries). After each turn but the last, the history gains the
reply exactly as the server wrote it and then a tool's result: ``--tool-result-tokens`` words
that arrive after a client-side tool latency (``--tool-latency-ms``, uniform over ±50% of the
mean), sent as a user message. A tool message proper (``role: tool``) needs the assistant to
have called a tool by id, which a text reply did not: a user message is what every API and
chat template accepts. After turn ``--fan-out-at``, ``--fan-out`` sub-agents run instead of the
tool: each is a session of its own (a fresh task, ``--sub-agent-turns`` turns, its own
connection and session key), all in parallel, and the parent waits for every one and continues
with their final replies as its tool result.

So a session's prompt lengths, and what a prefix cache can reuse from one turn to the next, are
what the server's own answers make them: each turn resends the previous one's prompt whole,
then the new reply and result.

Everything here is pure: the history, the draws and the session's account. ``run/agent.py``
sends the turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmload.errors import ConfigError
from llmload.workload.words import draw, seed_key, unit

MAX_FAN_OUT = 64
_TOOL_STREAM = 5  # the seed's stream for tool latencies: independent of prompts and think times
TOOL_RESULT_PREFIX = "Tool result:\n"


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """``--tool-result-tokens``, ``--tool-latency-ms``, ``--fan-out``, ``--fan-out-at`` and
    ``--sub-agent-turns``; the turns of a session are ``--turns``."""

    tool_result_tokens: int = 64
    tool_latency_ms: float = 0.0
    fan_out: int = 0
    fan_out_at: int = 1
    sub_turns: int = 2
    trace: str | None = None  # --agent-trace: recorded sessions replayed instead (agent_trace.py)

    def __post_init__(self) -> None:
        if isinstance(self.tool_result_tokens, bool) or self.tool_result_tokens < 1:
            raise ConfigError("--tool-result-tokens", self.tool_result_tokens, "must be 1 or more words")
        if not 0.0 <= self.tool_latency_ms < float("inf"):  # NaN fails too
            raise ConfigError("--tool-latency-ms", self.tool_latency_ms, "must be 0 or more milliseconds")
        if isinstance(self.fan_out, bool) or not 0 <= self.fan_out <= MAX_FAN_OUT:
            raise ConfigError("--fan-out", self.fan_out, f"must be 0 (none) to {MAX_FAN_OUT} sub-agents")
        if isinstance(self.fan_out_at, bool) or self.fan_out_at < 1:
            raise ConfigError("--fan-out-at", self.fan_out_at, "must be a turn, 1 or later")
        if isinstance(self.sub_turns, bool) or self.sub_turns < 1:
            raise ConfigError("--sub-agent-turns", self.sub_turns, "must be 1 or more")

    def fans_out_after(self, turn: int, turns: int) -> bool:
        """Whether sub-agents run after ``turn`` of a session of ``turns`` (never after the last)."""
        return self.fan_out > 0 and turn == self.fan_out_at and turn < turns

    def tool_latency_s(self, seed: int, user_index: int, request_index: int) -> float:
        """The tool's time after this request, seeded per (user, request) like every draw."""
        if self.tool_latency_ms == 0.0:
            return 0.0
        key = seed_key(seed, _TOOL_STREAM)
        return self.tool_latency_ms / 1000 * (0.5 + unit(draw(key, user_index, request_index)))


def next_history(
    history: Sequence[Mapping[str, object]], reply: str, tool_result: str
) -> tuple[Mapping[str, object], ...]:
    """The next turn's messages: the history, the server's reply as it wrote it, and a tool's
    result."""
    return (
        *history,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": TOOL_RESULT_PREFIX + tool_result},
    )


def joined_results(replies: Sequence[str]) -> str:
    """The sub-agents' final replies as the parent's one tool result, in their order."""
    return "\n\n".join(f"[sub-agent {i}]\n{text}" for i, text in enumerate(replies, 1))


@dataclass(slots=True)
class ReplayAccount:
    """How a recorded session's replay went, turn by turn (``agent_replay.py``): a live
    session's turns whose reply joined the history as the server wrote it (the last turn's
    too) or was spliced; a recorded-history session's turns, sent as recorded; and replies of
    either that stopped at ``max_tokens``."""

    live: int = 0
    spliced: int = 0
    recorded: int = 0
    cut: int = 0


@dataclass(slots=True)
class SessionAccount:
    """What one session did, filled turn by turn (sub-agents' requests included); ``done``
    when it ended: ``completed``, ``failed`` (a turn failed, so the rest never went out) or
    ``unfinished`` (the run ended inside it)."""

    stage: int
    measured: bool  # it started inside the stage's measured window
    started_ns: int
    ended_ns: int | None = None
    outcome: str | None = None
    turns: int = 0  # of the session itself, sub-agents' turns not counted
    requests: int = 0  # every request, sub-agents' included
    output_tokens: int = 0
    prompt_tokens: int = 0  # the server's counts, where it reported them
    cached_tokens: int = 0
    cache_reported_prompt_tokens: int = 0  # prompt tokens of requests whose usage had a cache count
    worst_ttft_ns: int | None = None  # of the session's own turns
    replay: ReplayAccount | None = None  # a recorded session's (--agent-trace); None: synthetic

    def add(self, *, own_turn: bool, ttft_ns: int | None, output_tokens: int, prompt_tokens: int | None,
            cached_tokens: int | None) -> None:  # fmt: skip
        self.requests += 1
        self.output_tokens += output_tokens
        if prompt_tokens is not None:
            self.prompt_tokens += prompt_tokens
            if cached_tokens is not None:
                self.cached_tokens += cached_tokens
                self.cache_reported_prompt_tokens += prompt_tokens
        if own_turn:
            self.turns += 1
            if ttft_ns is not None and (self.worst_ttft_ns is None or ttft_ns > self.worst_ttft_ns):
                self.worst_ttft_ns = ttft_ns

    def end(self, outcome: str, t_ns: int) -> None:
        self.outcome, self.ended_ns = outcome, t_ns

    @property
    def duration_ns(self) -> int | None:
        return None if self.ended_ns is None else self.ended_ns - self.started_ns

    @property
    def cache_hit_rate(self) -> float | None:
        reported = self.cache_reported_prompt_tokens
        return self.cached_tokens / reported if reported else None
