"""The batching scheduler and the fixed-timing scheduler, driven by a manual clock and timer."""

from __future__ import annotations

from sim_fakes import FakeSequence, ManualClock, ManualTimer

from llmload.sim.engine import BatchEngine
from llmload.sim.fixed import FixedEngine
from llmload.sim.model import FixedTiming, ModelParams
from llmload.sim.truth import Truth

MS = 1_000_000


def _batch(params: ModelParams) -> tuple[BatchEngine, ManualClock, list[ManualTimer], Truth]:
    clock, timers, truth = ManualClock(), [], Truth()

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    return BatchEngine(params, truth, timer, clock), clock, timers, truth


def _fire(clock: ManualClock, timer: ManualTimer, late_ns: int = 0) -> None:
    assert timer.deadline is not None
    clock.now = timer.deadline + late_ns
    timer.callback()


def test_idle_engine_starts_at_once_with_prefill() -> None:
    engine, clock, (timer,), _ = _batch(ModelParams(10 * MS, MS, prefill_per_token_ns=1000))
    t0 = clock.now
    engine.submit(FakeSequence(100, 3).as_generation())
    assert timer.deadline == t0 + 10 * MS + MS + 100 * 1000


def test_deadlines_are_absolute_so_lateness_does_not_drift() -> None:
    engine, clock, (timer,), truth = _batch(ModelParams(10 * MS, 0))
    seq = FakeSequence(0, 5)
    t0 = clock.now
    engine.submit(seq.as_generation())
    for late in (0, 3 * MS, 0, 2 * MS):
        _fire(clock, timer, late)
    assert timer.deadline == t0 + 5 * 10 * MS
    assert [step[2] for step in truth.steps] == [0, 3 * MS, 0, 2 * MS]
    assert [step[3] for step in truth.steps] == [10 * MS] * 4
    assert seq.steps == [t0 + 10 * MS, t0 + 20 * MS + 3 * MS, t0 + 30 * MS, t0 + 40 * MS + 2 * MS]


def test_early_wake_rearms_for_the_real_deadline() -> None:
    engine, clock, (timer,), truth = _batch(ModelParams(10 * MS, 0))
    engine.submit(FakeSequence(0, 5).as_generation())
    deadline = timer.deadline
    assert deadline is not None
    clock.now = deadline - 1
    timer.callback()
    assert timer.deadline == deadline
    assert not truth.steps


def test_arrivals_during_a_step_join_at_the_next_boundary() -> None:
    engine, clock, (timer,), _ = _batch(ModelParams(10 * MS, MS))
    first, second = FakeSequence(0, 3), FakeSequence(0, 3)
    engine.submit(first.as_generation())
    clock.now += 4 * MS
    engine.submit(second.as_generation())
    assert (engine.running_count, engine.waiting_count) == (1, 1)
    _fire(clock, timer)
    assert (engine.running_count, engine.waiting_count) == (2, 0)
    assert second.steps == []
    _fire(clock, timer)
    assert len(second.steps) == 1 and len(first.steps) == 2


def test_a_request_admitted_after_a_late_wake_up_has_no_negative_queue_time() -> None:
    engine, clock, (timer,), _ = _batch(ModelParams(10 * MS, 0))
    first, second = FakeSequence(0, 3), FakeSequence(0, 3)
    engine.submit(first.as_generation())
    deadline = timer.deadline
    assert deadline is not None
    clock.now = deadline + 2 * MS  # the timer wakes 2 ms late; a request came in meanwhile
    second.start_ns = deadline + MS
    engine.submit(second.as_generation())
    timer.callback()
    assert second.scheduled_ns == second.start_ns  # admitted to the step planned before it came


def test_max_running_queues_the_rest() -> None:
    engine, clock, (timer,), _ = _batch(ModelParams(MS, 0, max_running=2))
    seqs = [FakeSequence(0, 3) for _ in range(3)]
    for seq in seqs:
        engine.submit(seq.as_generation())
    assert (engine.running_count, engine.waiting_count) == (1, 2)  # the first started at once
    _fire(clock, timer)
    assert (engine.running_count, engine.waiting_count) == (2, 1)
    _fire(clock, timer)
    _fire(clock, timer)  # the first finishes here; the third is admitted
    assert (engine.running_count, engine.waiting_count) == (2, 0)
    while engine.running_count:
        _fire(clock, timer)
    assert [seq.generated for seq in seqs] == [3, 3, 3]
    assert len(seqs[2].steps) == 3 and seqs[2].steps[0] > seqs[1].steps[-1] - 3 * MS
    # vLLM's scheduled_ts, the end of each one's queue: the start of the step that admitted it
    first, second, third = (seq.scheduled_ns for seq in seqs)
    assert first is not None and second is not None and third is not None
    assert first < second < third and third == seqs[2].steps[0] - MS


def test_kv_budget_preempts_the_newest() -> None:
    engine, clock, (timer,), truth = _batch(ModelParams(MS, 0, kv_budget_tokens=25))
    old, new = FakeSequence(10, 20), FakeSequence(10, 20)
    engine.submit(old.as_generation())
    engine.submit(new.as_generation())
    _fire(clock, timer)
    assert engine.running_count == 2
    while truth.preemptions_total == 0:
        _fire(clock, timer)
    assert engine.waiting_count == 1
    assert engine.kv_tokens <= 25
    while old.generated < 20:
        _fire(clock, timer)
    _fire(clock, timer)
    assert engine.running_count == 1  # the preempted one came back
    while engine.running_count:
        _fire(clock, timer)
    assert new.generated == 20


def test_cancelled_sequences_leave() -> None:
    engine, clock, (timer,), _ = _batch(ModelParams(MS, 0, max_running=1))
    a, b = FakeSequence(0, 100), FakeSequence(0, 3)
    engine.submit(a.as_generation())
    engine.submit(b.as_generation())
    a.cancelled = True
    _fire(clock, timer)
    assert engine.running_count == 1 and b.generated == 0
    _fire(clock, timer)
    assert b.generated == 1


def test_fixed_timing_per_request_deadlines() -> None:
    clock, timers, truth = ManualClock(), [], Truth()

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    engine = FixedEngine(FixedTiming(50 * MS, 20 * MS), truth, timer, clock)
    a, b = FakeSequence(0, 3), FakeSequence(0, 2)
    a.start_ns, b.start_ns = clock.now, clock.now + 7 * MS
    engine.submit(a.as_generation())
    engine.submit(b.as_generation())
    (t,) = timers
    while t.deadline is not None and engine.running_count:
        _fire(clock, t)
    start = a.start_ns
    assert a.steps == [start + 50 * MS, start + 70 * MS, start + 90 * MS]
    assert b.steps == [b.start_ns + 50 * MS, b.start_ns + 70 * MS]
    assert len(truth.steps) == 5


def test_fixed_timing_coalesces_deadlines_microseconds_apart() -> None:
    clock, timers = ManualClock(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    truth = Truth()
    engine = FixedEngine(FixedTiming(MS, MS), truth, timer, clock)
    seqs = [FakeSequence(0, 1) for _ in range(3)]
    for i, seq in enumerate(seqs):
        seq.start_ns = clock.now + i * 5_000
        engine.submit(seq.as_generation())
    _fire(clock, timers[0])
    assert all(seq.generated == 1 for seq in seqs)
    assert len(truth.steps) == 1


def test_a_waiting_request_its_client_closed_is_no_longer_counted_waiting() -> None:
    engine, _clock, _timers, _ = _batch(ModelParams(MS, 0, max_running=1))
    running, waiting = FakeSequence(0, 100), FakeSequence(0, 3)
    engine.submit(running.as_generation())
    engine.submit(waiting.as_generation())
    assert engine.waiting_count == 1
    waiting.cancelled = True  # as vLLM aborts it from its queue: /metrics stops counting it
    assert (engine.running_count, engine.waiting_count) == (1, 0)
