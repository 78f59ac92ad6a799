"""The batching scheduler with a prefix cache: prefill charged for uncached prompt tokens only."""

from __future__ import annotations

import dataclasses

from sim_fakes import FakeSequence, ManualClock, ManualTimer

from llmload.sim.engine import BatchEngine
from llmload.sim.model import ModelParams
from llmload.sim.truth import Truth

MS = 1_000_000
PREFILL_NS = 10_000
PROMPT = [f"w{i}" for i in range(100)]  # 6 full blocks and a 4-token tail


def _engine(**changes: int) -> tuple[BatchEngine, ManualClock, ManualTimer, Truth]:
    params = ModelParams(10 * MS, MS, prefill_per_token_ns=PREFILL_NS, prefix_cache_tokens=10_000)
    params = dataclasses.replace(params, **changes)
    clock, truth, timers = ManualClock(), Truth(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    return BatchEngine(params, truth, timer, clock), clock, timers[0], truth


def _fire(clock: ManualClock, timer: ManualTimer) -> None:
    assert timer.deadline is not None
    clock.now = timer.deadline
    timer.callback()


def _drain(engine: BatchEngine, clock: ManualClock, timer: ManualTimer) -> None:
    while engine.running_count or engine.waiting_count:
        _fire(clock, timer)


def test_a_repeated_prompt_prefills_only_its_uncached_tail() -> None:
    engine, clock, timer, _ = _engine()
    first = FakeSequence(0, 2, prompt=PROMPT)
    engine.submit(first.as_generation())
    assert timer.deadline == clock.now + 11 * MS + 100 * PREFILL_NS
    _drain(engine, clock, timer)
    second = FakeSequence(0, 2, prompt=PROMPT)
    start = clock.now
    engine.submit(second.as_generation())
    assert timer.deadline == start + 11 * MS + 4 * PREFILL_NS  # 96 tokens came from the cache
    assert (first.cached_tokens, second.cached_tokens) == (0, 96)
    assert (engine.cache_stats.queries, engine.cache_stats.hits) == (200, 96)
    assert engine.cache_stats.batch_hit_rate == 0.96


def test_prompts_admitted_into_the_same_step_both_prefill_in_full() -> None:
    engine, clock, timer, _ = _engine()
    engine.submit(FakeSequence(0, 2, prompt=["warm", "up"]).as_generation())
    a, b = FakeSequence(0, 2, prompt=PROMPT), FakeSequence(0, 2, prompt=PROMPT)
    engine.submit(a.as_generation())
    engine.submit(b.as_generation())
    step_start = timer.deadline
    _fire(clock, timer)  # both join the second step, and the cache learns the prompt at its end
    assert timer.deadline == step_start + 10 * MS + 3 * MS + 200 * PREFILL_NS
    assert (a.cached_tokens, b.cached_tokens) == (0, 0)
    _drain(engine, clock, timer)
    c = FakeSequence(0, 2, prompt=PROMPT)
    engine.submit(c.as_generation())
    assert c.cached_tokens == 96


def test_without_a_cache_every_token_is_prefilled() -> None:
    engine, clock, timer, _ = _engine(prefix_cache_tokens=0)
    assert engine.prefix_cache is None
    for _ in range(2):
        seq = FakeSequence(0, 2, prompt=PROMPT)
        start = clock.now
        engine.submit(seq.as_generation())
        assert timer.deadline == start + 11 * MS + 100 * PREFILL_NS
        assert seq.cached_tokens == 0
        _drain(engine, clock, timer)
    assert (engine.cache_stats.queries, engine.cache_stats.hits) == (0, 0)


def test_unique_prompts_never_hit_and_keep_the_old_timing() -> None:
    engine, clock, timer, _ = _engine()
    for _ in range(3):
        seq = FakeSequence(100, 2)  # a distinct prompt each time, like llmload's salted ones
        start = clock.now
        engine.submit(seq.as_generation())
        assert timer.deadline == start + 11 * MS + 100 * PREFILL_NS
        _drain(engine, clock, timer)
    assert (engine.cache_stats.queries, engine.cache_stats.hits) == (300, 0)


def test_a_preempted_sequence_finds_its_prompt_again_uncounted() -> None:
    # Room for one 100-token prompt and a little growth: the second sequence is preempted.
    engine, clock, timer, truth = _engine(kv_budget_tokens=215, step_per_seq_ns=0)
    old = FakeSequence(0, 30, prompt=[f"old{i}" for i in range(100)])
    new = FakeSequence(0, 30, prompt=PROMPT)
    engine.submit(old.as_generation())
    engine.submit(new.as_generation())
    _fire(clock, timer)  # the second is admitted into the second step
    while truth.preemptions_total == 0:
        _fire(clock, timer)
    assert engine.waiting_count == 1
    generated = new.generated
    while engine.waiting_count:
        _fire(clock, timer)
    # Re-admitted: its 96 cached prompt tokens are skipped, the 4-token tail and the generated
    # tokens recomputed; the counters saw only the first lookups.
    assert timer.deadline is not None
    prefill_ns = timer.deadline - clock.now - 10 * MS
    assert prefill_ns == (4 + new.generated) * PREFILL_NS
    assert new.generated == generated
    assert new.cached_tokens == 0  # usage reports the first admission, as vLLM's num_cached_tokens
    assert (engine.cache_stats.queries, engine.cache_stats.hits) == (200, 0)
    _drain(engine, clock, timer)
    assert new.generated == 30
