"""The adapter-switch cost: a step that brings in an adapter the previous step lacked is longer."""

from __future__ import annotations

from sim_fakes import FakeSequence, ManualClock, ManualTimer

from llmload.sim.engine import BatchEngine
from llmload.sim.model import ModelParams
from llmload.sim.truth import Truth

MS = 1_000_000
SWITCH = 7 * MS
PARAMS = ModelParams(10 * MS, MS)  # a step: 10 ms + 1 ms per running sequence


def _engine(switch_ns: int = SWITCH) -> tuple[BatchEngine, ManualClock, ManualTimer]:
    clock, timers = ManualClock(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    return BatchEngine(PARAMS, Truth(), timer, clock, adapter_switch_ns=switch_ns), clock, timers[0]


def _seq(adapter: str | None, tokens: int = 3) -> FakeSequence:
    seq = FakeSequence(0, tokens)
    seq.adapter = adapter
    return seq


def _step(clock: ManualClock, timer: ManualTimer) -> int:
    """Fire the armed deadline; return the length of the step planned next (0: idle)."""
    assert timer.deadline is not None
    clock.now = timer.deadline
    timer.callback()
    return 0 if timer.deadline == clock.now else (timer.deadline or clock.now) - clock.now


def test_the_base_model_never_pays_a_switch() -> None:
    engine, clock, timer = _engine()
    engine.submit(_seq(None).as_generation())
    assert timer.deadline == clock.now + 11 * MS


def test_a_new_adapter_costs_one_switch_then_nothing_while_it_stays() -> None:
    engine, clock, timer = _engine()
    engine.submit(_seq("a").as_generation())
    assert timer.deadline == clock.now + 11 * MS + SWITCH  # loaded for the first step
    assert _step(clock, timer) == 11 * MS  # still in the batch: still loaded
    assert _step(clock, timer) == 11 * MS


def test_each_newly_loaded_adapter_costs_once_in_the_same_step() -> None:
    engine, clock, timer = _engine()
    engine.submit(_seq("warm", 1).as_generation())  # starts a step; the next two join the next
    engine.submit(_seq("a").as_generation())
    engine.submit(_seq("b").as_generation())
    engine.submit(_seq("a").as_generation())
    assert _step(clock, timer) == 10 * MS + 3 * MS + 2 * SWITCH  # a and b, once each


def test_an_adapter_left_out_of_a_step_is_loaded_again() -> None:
    engine, clock, timer = _engine()
    engine.submit(_seq("a", 1).as_generation())  # one token: gone after its step
    engine.submit(_seq(None, 1).as_generation())  # the base model's step in between
    assert _step(clock, timer) == 11 * MS
    engine.submit(_seq("a", 1).as_generation())
    assert _step(clock, timer) == 11 * MS + SWITCH


def test_no_switch_cost_by_default() -> None:
    engine, clock, timer = _engine(0)
    engine.submit(_seq("a").as_generation())
    assert timer.deadline == clock.now + 11 * MS


def test_the_prefix_cache_keeps_each_adapters_blocks_apart() -> None:
    params = ModelParams(10 * MS, MS, prefix_cache_tokens=10_000)
    clock, timers = ManualClock(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    engine = BatchEngine(params, Truth(), timer, clock)
    prompt = [f"w{i}" for i in range(40)]
    found = []
    for adapter in ("a", "a", "b", None, None):
        seq = FakeSequence(0, 1, prompt=prompt)
        seq.adapter = adapter
        engine.submit(seq.as_generation())
        while engine.running_count:
            _step(clock, timers[0])
        found.append(seq.cached_tokens)
    assert found == [0, 32, 0, 0, 32]
