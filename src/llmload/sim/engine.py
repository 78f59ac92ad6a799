"""The batching scheduler: continuous batching on absolute deadlines.

Step ``k`` runs from ``t_k`` to ``t_{k+1} = t_k + step_k``; at ``t_{k+1}`` every sequence that was
in step ``k`` gets its event written, then the next step is planned: finished sequences leave,
waiting ones are admitted (their prefill lengthens the step), and the timer is armed for the new
deadline. Deadlines are absolute, so a late wake-up shortens the next sleep instead of shifting
every later step: the simulator never drifts, and it reports how late each step started.
An idle engine starts the next step the moment a request arrives.

With a prefix cache, an admitted sequence prefills only what the cache does not hold; its prompt
enters the cache when its admission step ends (its prefill has run), so two identical prompts
admitted into the same step both prefill in full. A preempted sequence looks its prompt up again
when re-admitted (it usually finds its own blocks) and recomputes its generated tokens, which are
never cached; that second lookup stays out of the hit counters, as in vLLM. The KV budget still
counts every sequence's whole prompt: shared blocks are not deduplicated.

Served models past the first are LoRA adapters on it (``--model base,a,b``). A step whose batch
holds an adapter the previous step did not is longer by ``adapter_switch_ns`` per such adapter:
the load of its weights, as a swap into vLLM's LoRA slots costs. An adapter stays loaded only while
consecutive steps use it, the simplest rule that makes mixing adapters in a batch cost something.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from llmload.sim.generation import Generation
from llmload.sim.model import ModelParams
from llmload.sim.prefix_cache import PrefixCache, PrefixCacheStats
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

    @property
    def cache_stats(self) -> PrefixCacheStats: ...

    def reset_prefix_cache(self) -> int:
        """Forget every cached prefix; returns the tokens dropped."""
        ...


class BatchEngine:
    """Runs generations in a continuously batched loop following ``ModelParams``."""

    def __init__(
        self,
        params: ModelParams,
        truth: Truth,
        timer: TimerFactory,
        clock: Callable[[], int] = time.perf_counter_ns,
        *,
        adapter_switch_ns: int = 0,
    ) -> None:
        self.params = params
        self._clock = clock
        self._adapter_switch_ns = adapter_switch_ns
        self._adapters: frozenset[str] = frozenset()  # the adapters of the last step planned
        self._truth = truth
        self._timer = timer(self._on_deadline)
        self.running: list[Generation] = []
        self.waiting: deque[Generation] = deque()
        self.prefix_cache = PrefixCache(params.prefix_cache_tokens) if params.prefix_cache_tokens else None
        self._cache_stats = PrefixCacheStats() if self.prefix_cache is None else self.prefix_cache.stats
        self._prefilled: list[Generation] = []  # admitted into the running step: cached at its end
        self._kv_tokens = 0  # KV-cache tokens held by the running sequences
        self._deadline_ns: int | None = None  # None: idle
        self._step_start_ns = 0

    @property
    def running_count(self) -> int:
        return len(self.running)

    @property
    def waiting_count(self) -> int:
        # A request its client closed while it waited leaves the queue at once in vLLM (an
        # abort); here it is dropped when it reaches the head, so it is not counted meanwhile.
        return sum(1 for g in self.waiting if not g.cancelled)

    @property
    def kv_tokens(self) -> int:
        return self._kv_tokens

    @property
    def cache_stats(self) -> PrefixCacheStats:
        return self._cache_stats

    def reset_prefix_cache(self) -> int:
        return self.prefix_cache.clear() if self.prefix_cache is not None else 0

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
        if self._prefilled:
            self._cache_prefilled()
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
        prefill = self._admit(start_ns)
        if not self.running:
            self._deadline_ns = None
            return
        if self._prefilled:
            admitted = sum(g.prompt_tokens + g.generated for g in self._prefilled)
            self._cache_stats.prefill_batch(admitted - prefill, admitted)
        else:
            self._cache_stats.decode_batch()
        duration = round(self.params.step_ns(len(self.running), prefill))
        if self._adapter_switch_ns:
            duration += self._adapter_switch_ns * self._load_adapters()
        self._step_start_ns = start_ns
        self._deadline_ns = start_ns + duration
        self._timer.arm(self._deadline_ns)

    def _load_adapters(self) -> int:
        """How many adapters the step being planned holds that the previous step did not."""
        adapters = frozenset(g.adapter for g in self.running if g.adapter is not None)
        loads = len(adapters - self._adapters)
        self._adapters = adapters
        return loads

    def _admit(self, start_ns: int) -> int:
        """Admit waiting sequences that fit into the step starting at ``start_ns``; return the
        tokens they prefill."""
        params = self.params
        prefill = 0
        prefilled = self._prefilled
        while self.waiting and len(self.running) < params.max_running:
            generation = self.waiting[0]
            if generation.cancelled:
                self.waiting.popleft()
                continue
            # A preempted sequence recomputes its generated tokens along with its prompt (less
            # what the prefix cache holds, see _lookup).
            need = generation.prompt_tokens + generation.generated
            growth = (len(self.running) + 1) * params.max_tokens_per_step
            if self.running and self._kv_tokens + need + growth > params.kv_budget_tokens:
                break
            self.waiting.popleft()
            self.running.append(generation)
            if generation.scheduled_ns is None:  # vLLM's scheduled_ts: the first admission
                # A late wake-up admits requests that came after the step's planned start into
                # that step; their queue time is nil, never negative.
                generation.scheduled_ns = max(start_ns, generation.start_ns)
            self._kv_tokens += need
            prefill += need - self._lookup(generation)
            prefilled.append(generation)
        return prefill

    def _lookup(self, generation: Generation) -> int:
        """Prompt tokens the cache holds for an admitted sequence; the first admission records it."""
        first = generation.cached_tokens is None
        cache = self.prefix_cache
        cached = (
            0 if cache is None else cache.lookup(generation.prompt, record=first, adapter=generation.adapter)
        )
        if first:
            generation.cached_tokens = cached
        return cached

    def _cache_prefilled(self) -> None:
        cache = self.prefix_cache
        if cache is not None:
            for generation in self._prefilled:
                cache.insert(generation.prompt, generation.adapter)
        self._prefilled.clear()

    def _preempt(self) -> None:
        """Requeue the newest sequences while the next step's growth would overflow the budget.

        The recompute policy of vLLM: the sequence keeps what it streamed, loses its KV blocks
        (the prefix cache keeps its prompt's), and goes back to the front of the queue; its
        stream simply pauses.
        """
        budget = self.params.kv_budget_tokens
        per_seq = self.params.max_tokens_per_step
        growth = len(self.running) * per_seq
        while len(self.running) > 1 and self._kv_tokens + growth > budget:
            victim = self.running.pop()
            self._kv_tokens -= victim.prompt_tokens + victim.generated
            growth -= per_seq
            self.waiting.appendleft(victim)
            self._truth.preemptions_total += 1
