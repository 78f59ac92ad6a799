"""Replicas behind the router: placement by session key or in turn, separate caches, cancellation."""

from __future__ import annotations

import zlib
from collections import Counter

import pytest
from sim_fakes import FakeConnection, FakeSequence, ManualClock, ManualTimer

from llmload.sim.engine import BatchEngine
from llmload.sim.generation import Generation, ResponseInfo
from llmload.sim.model import ModelParams
from llmload.sim.render import ChunkRenderer
from llmload.sim.replicas import Replicas
from llmload.sim.router import Router, RouterPolicy, replica_of, session_key
from llmload.sim.tokens import OutputPlan, TokenText
from llmload.sim.truth import Truth

MS = 1_000_000
PROMPT = [f"w{i}" for i in range(100)]  # 6 full blocks and a 4-token tail


def test_a_session_key_always_lands_on_the_same_replica() -> None:
    router = Router(4, "session")
    for key in ("alpha", "beta", "conversation-17", "ünïcode"):
        picks = {router.pick(key) for _ in range(20)}
        assert picks == {replica_of(key, 4)}
    # Stable across processes: CRC-32 of the UTF-8 bytes, not Python's salted str hash
    assert replica_of("alpha", 4) == zlib.crc32(b"alpha") % 4


def test_session_keys_spread_over_the_replicas() -> None:
    counts = Counter(replica_of(f"session-{i}", 4) for i in range(400))
    assert set(counts) == {0, 1, 2, 3}
    assert min(counts.values()) > 60  # about 100 each


def test_round_robin_deals_requests_in_turn_whatever_the_key() -> None:
    router = Router(3, "round-robin")
    assert [router.pick("same") for _ in range(6)] == [0, 1, 2, 0, 1, 2]


def test_requests_without_a_key_go_round_robin_under_the_session_policy() -> None:
    router = Router(3, "session")
    keyed = replica_of("k", 3)
    picks = [router.pick(None), router.pick("k"), router.pick(None), router.pick(None), router.pick("k")]
    assert picks == [0, keyed, 1, 2, keyed]  # the keyed ones take no turn


def test_one_replica_is_always_replica_0() -> None:
    router = Router(1, "session")
    assert {router.pick(k) for k in ("a", None, "b")} == {0}
    with pytest.raises(ValueError):
        Router(0)


@pytest.mark.parametrize(
    ("headers", "key"),
    [
        ({"x-session-affinity": "s1"}, "s1"),
        ({"x-session-id": "s2"}, "s2"),
        ({"x-session-affinity": "s1", "x-session-id": "s2"}, "s1"),  # the named header first
        ({"x-session-affinity": "  "}, None),
        ({"x-correlation-id": "c"}, None),
        ({}, None),
    ],
)
def test_the_session_key_is_read_from_the_named_header_then_x_session_id(
    headers: dict[str, str], key: str | None
) -> None:
    assert session_key(headers) == key


def test_a_configured_header_replaces_the_default_one() -> None:
    assert session_key({"x-correlation-id": "c", "x-session-affinity": "a"}, "x-correlation-id") == "c"
    assert session_key({"x-session-id": "s"}, "x-correlation-id") == "s"


def _replicas(n: int, policy: RouterPolicy = "session") -> tuple[Replicas, ManualClock, list[ManualTimer]]:
    params = ModelParams(10 * MS, MS, prefill_per_token_ns=10_000, prefix_cache_tokens=10_000)
    clock, truth, timers = ManualClock(), Truth(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    engines = [BatchEngine(params, truth, timer, clock) for _ in range(n)]
    return Replicas(engines, Router(n, policy)), clock, timers


def _drain(replicas: Replicas, clock: ManualClock, timers: list[ManualTimer]) -> None:
    """Run every busy replica until all are idle (timers[i] is replica i's)."""
    while replicas.running_count or replicas.waiting_count:
        for engine, timer in zip(replicas.engines, timers, strict=True):
            if engine.running_count or engine.waiting_count:
                assert timer.deadline is not None
                clock.now = max(clock.now, timer.deadline)
                timer.callback()


def _keyed(key: str | None, prompt: list[str] = PROMPT) -> FakeSequence:
    seq = FakeSequence(0, 2, prompt=prompt)
    seq.session = key
    return seq


def test_a_sessions_turns_find_their_prefix_in_their_own_replicas_cache() -> None:
    replicas, clock, timers = _replicas(4)
    first = _keyed("chat-1")
    replicas.submit(first.as_generation())
    _drain(replicas, clock, timers)
    second = _keyed("chat-1", [*PROMPT, *(f"x{i}" for i in range(40))])
    replicas.submit(second.as_generation())
    _drain(replicas, clock, timers)
    assert first.replica == second.replica == replica_of("chat-1", 4)
    assert (first.cached_tokens, second.cached_tokens) == (0, 96)
    # the sums over the replicas, as /metrics reports them
    assert (replicas.cache_stats.queries, replicas.cache_stats.hits) == (240, 96)
    each = [(s.queries, s.hits) for s in replicas.replica_cache_stats()]
    assert sorted(each) == [(0, 0), (0, 0), (0, 0), (240, 96)]


def test_round_robin_sends_the_next_turn_to_a_replica_whose_cache_lacks_it() -> None:
    replicas, clock, timers = _replicas(4, "round-robin")
    turns = [_keyed("chat-1") for _ in range(4)]
    for turn in turns:
        replicas.submit(turn.as_generation())
        _drain(replicas, clock, timers)
    assert [t.replica for t in turns] == [0, 1, 2, 3]
    assert [t.cached_tokens for t in turns] == [0, 0, 0, 0]
    assert replicas.reset_prefix_cache() == 4 * 96


def test_each_replica_batches_on_its_own() -> None:
    replicas, _, timers = _replicas(2, "round-robin")
    for _ in range(4):
        replicas.submit(FakeSequence(10, 5).as_generation())
    # each started a step with its first request; its second waits for that step's end
    assert [(e.running_count, e.waiting_count) for e in replicas.engines] == [(1, 1), (1, 1)]
    assert (replicas.running_count, replicas.waiting_count, replicas.kv_tokens) == (2, 2, 20)
    assert all(t.deadline is not None for t in timers)


def _generation(truth: Truth, session: str) -> Generation:
    conn = FakeConnection()
    info = ResponseInfo(True, "chatcmpl-sim-1", 1700000000, "m", 9, False, (("server", "x"),))
    renderer = ChunkRenderer(
        chat=True,
        response_id=info.response_id,
        created=info.created,
        model="m",
        prompt_tokens=9,
        continuous_usage=False,
        emit_timestamps=False,
    )
    entry = truth.begin(id=info.response_id, client="c", path="/p", stream=True, arrival_ns=1)
    generation = Generation(
        info=info,
        plan=OutputPlan(50, "length"),
        text=TokenText(0, 1),
        tokens_per_chunk=1,
        renderer=renderer,
        entry=entry,
        conn=conn.as_connection(),
        truth=truth,
        prompt=PROMPT,
    )
    generation.session = session
    return generation


def test_a_cancelled_request_frees_its_replicas_slot_and_logs_what_it_was_sent() -> None:
    truth = Truth()
    params = ModelParams(10 * MS, MS, max_running=1, prefix_cache_tokens=10_000)
    clock, timers = ManualClock(), []

    def timer(callback: object) -> ManualTimer:
        timers.append(ManualTimer(callback))  # type: ignore[arg-type]
        return timers[-1]

    replicas = Replicas([BatchEngine(params, truth, timer, clock) for _ in range(3)], Router(3, "session"))
    cancelled, queued = _generation(truth, "s"), _generation(truth, "s")
    replicas.submit(cancelled)
    replicas.submit(queued)
    index = replica_of("s", 3)
    engine = replicas.engines[index]
    assert (engine.running_count, engine.waiting_count) == (1, 1)
    for _ in range(3):
        clock.now = timers[index].deadline or 0
        timers[index].callback()
    cancelled.on_disconnect()  # the client went away after 3 tokens
    clock.now = timers[index].deadline or 0
    timers[index].callback()
    assert engine.running_count == 1 and engine.waiting_count == 0  # the queued one took the slot
    (entry,) = truth.entries
    assert (entry.outcome, entry.completion_tokens, entry.replica) == ("cancelled", 3, index)
    assert entry.as_json()["replica"] == index and entry.as_json()["cached_tokens"] == 0
