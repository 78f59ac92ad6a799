"""Stand-ins for the I/O edges of the simulator, so its logic runs without sockets or time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from llmload.sim.generation import Generation
from llmload.sim.http import HttpConnection
from llmload.sim.tokens import Token


class ManualClock:
    def __init__(self, now: int = 1_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class ManualTimer:
    """Records the armed deadline; the test fires it."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.deadline: int | None = None

    def arm(self, deadline_ns: int) -> None:
        self.deadline = deadline_ns

    def close(self) -> None:
        self.deadline = None


class FakeConnection:
    """Collects what a generation writes, and how the exchange ended."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.ended = ""
        self.peer = "127.0.0.1:1"
        self.exchange: Any = None

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def respond(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.writes.append(b"%d " % status + body)
        self.finish()

    def finish(self) -> None:
        self.ended = "finish"

    def close(self) -> None:
        self.ended = "close"

    def reset(self) -> None:
        self.ended = "reset"

    def as_connection(self) -> HttpConnection:
        return cast(HttpConnection, self)


class FakeSequence:
    """What an engine sees of a generation: prompt, progress, one event per step.

    ``prompt`` defaults to ``prompt_tokens`` tokens no other sequence has, so that nothing hits
    the prefix cache unless a test says so.
    """

    def __init__(self, prompt_tokens: int, tokens: int, prompt: Sequence[Token] | None = None) -> None:
        self.prompt: Sequence[Token] = (
            [f"{id(self)}-{i}" for i in range(prompt_tokens)] if prompt is None else prompt
        )
        self.prompt_tokens = len(self.prompt)
        self.cached_tokens: int | None = None
        self.tokens = tokens
        self.generated = 0
        self.cancelled = False
        self.start_ns = 0
        self.scheduled_ns: int | None = None
        self.steps: list[int] = []
        self.adapter: str | None = None  # None: the base model
        self.session: str | None = None
        self.replica: int | None = None

    def step(self, now_ns: int) -> bool:
        if self.cancelled:
            return True
        self.steps.append(now_ns)
        self.generated += 1
        return self.generated >= self.tokens

    def as_generation(self) -> Generation:
        return cast(Generation, self)
