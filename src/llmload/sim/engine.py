"""The batching scheduler: continuous batching on absolute deadlines.

Step ``k`` runs from ``t_k`` to ``t_{k+1} = t_k + step_k``; at ``t_{k+1}`` every sequence that was
in step ``k`` gets its event written, then the next step is planned: finished sequences leave,
waiting ones are admitted (their prefill lengthens the step), and the timer is armed for the new
deadline. Deadlines are absolute, so a late wake-up shortens the next sleep instead of shifting
every later step: the simulator never drifts, and it reports how late each step started.
An idle engine starts the next step the moment a request arrives.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from llmload.sim.generation import Generation
from llmload.sim.model import ModelParams
from llmload.sim.truth import Truth


class Timer(Protocol):
    """What an engine needs of a timer (``clock.DeadlineTimer`` is one)."""

    def arm(self, deadline_ns: int) -> None: ...

    def close(self) -> None: ...


TimerFactory = Callable[[Callable[[], None]], Timer]


class Engine(Protocol):
    """What the server needs of a scheduler (``BatchEngine``, ``fixed.FixedEngine``)."""

    def submit(self, generation: Generation) -> None: ...

    def close(self) -> None: ...

    @property
    def running_count(self) -> int: ...

    @property
    def waiting_count(self) -> int: ...

    @property
    def kv_tokens(self) -> int: ...


class BatchEngine:
    """Runs generations in a continuously batched loop following ``ModelParams``."""

    def __init__(
        self,
        params: ModelParams,
        truth: Truth,
        timer: TimerFactory,
        clock: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self.params = params
        self._clock = clock
        self._truth = truth
        self._timer = timer(self._on_deadline)
        self.running: list[Generation] = []
        self.waiting: deque[Generation] = deque()
        self._kv_tokens = 0  # KV-cache tokens held by the running sequences
        self._deadline_ns: int | None = None  # None: idle
        self._step_start_ns = 0

    @property
    def running_count(self) -> int:
        return len(self.running)

    @property
    def waiting_count(self) -> int:
        return len(self.waiting)

    @property
    def kv_tokens(self) -> int:
        return self._kv_tokens

    def submit(self, generation: Generation) -> None:
        """Queue a request; an idle engine starts a step at once."""
        self.waiting.append(generation)
        if self._deadline_ns is None:
            self._start_step(self._clock())

    def close(self) -> None:
        self._timer.close()

    def _on_deadline(self) -> None:
        now = self._clock()
        deadline = self._deadline_ns
        if deadline is None:
            return
        if now < deadline:  # woke early (a re-armed timer): wait for the real deadline
            self._timer.arm(deadline)
            return
        kept: list[Generation] = []
        kv = 0
        for generation in self.running:
            if not generation.step(now):
                kept.append(generation)
                kv += generation.prompt_tokens + generation.generated
        self.running = kept
        self._kv_tokens = kv
        self._truth.step_done(now - deadline, self._clock(), deadline - self._step_start_ns)
        self._start_step(deadline)

    def _start_step(self, start_ns: int) -> None:
        """Plan the step that starts at ``start_ns`` and arm the timer for its end."""
        self._preempt()
        prefill = self._admit()
        if not self.running:
            self._deadline_ns = None
            return
        duration = self.params.step_ns(len(self.running), prefill)
        self._step_start_ns = start_ns
        self._deadline_ns = start_ns + duration
        self._timer.arm(self._deadline_ns)

    def _admit(self) -> int:
        """Admit waiting sequences that fit; return the prompt tokens they prefill."""
        params = self.params
        prefill = 0
        while self.waiting and len(self.running) < params.max_running:
            generation = self.waiting[0]
            if generation.cancelled:
                self.waiting.popleft()
                continue
            # A preempted sequence recomputes its generated tokens along with its prompt.
            need = generation.prompt_tokens + generation.generated
            growth = (len(self.running) + 1) * params.tokens_per_chunk
            if self.running and self._kv_tokens + need + growth > params.kv_budget_tokens:
                break
            self.waiting.popleft()
            self.running.append(generation)
            self._kv_tokens += need
            prefill += need
        return prefill

    def _preempt(self) -> None:
        """Requeue the newest sequences while the next step's growth would overflow the budget.

        The recompute policy of vLLM: the sequence keeps what it streamed, loses its cache, and
        goes back to the front of the queue; its stream simply pauses.
        """
        budget = self.params.kv_budget_tokens
        growth = len(self.running) * self.params.tokens_per_chunk
        while len(self.running) > 1 and self._kv_tokens + growth > budget:
            victim = self.running.pop()
            self._kv_tokens -= victim.prompt_tokens + victim.generated
            growth -= self.params.tokens_per_chunk
            self.waiting.appendleft(victim)
            self._truth.preemptions_total += 1
