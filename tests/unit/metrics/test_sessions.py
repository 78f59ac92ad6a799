"""A stage's sessions: counted by how they ended, merged exactly, and carried over the wire."""

from __future__ import annotations

from typing import Any

import orjson

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.export.console import render_stage
from llmload.metrics import wire
from llmload.metrics.aggregate import StageStats
from llmload.metrics.sessions import SessionSide
from llmload.results.from_stats import stage_summary
from llmload.results.summary_stage import ReplaySummary
from llmload.workload.agents import ReplayAccount, SessionAccount


def _session(outcome: str, turns: int = 3) -> SessionAccount:
    s = SessionAccount(stage=0, measured=True, started_ns=0)
    for _ in range(turns):
        s.add(own_turn=True, ttft_ns=1_000_000, output_tokens=8, prompt_tokens=64, cached_tokens=32)
    s.end(outcome, 2_000_000_000)
    return s


def _record(turn: str, prompt: int | None, cached: int | None) -> RequestRecord:
    r = RequestRecord("r", "0", 0, Phase.MEASURE, "chat", True, 0, labels=(("group", "1"), ("turn", turn)))
    r.prompt_tokens, r.cached_tokens = prompt, cached
    return r


def test_only_completed_sessions_enter_the_histograms() -> None:
    side = SessionSide()
    for outcome in ("completed", "completed", "failed", "unfinished"):
        side.add_session(_session(outcome))
    assert side.ended == {"completed": 2, "failed": 1, "unfinished": 1}
    assert side.hist["duration"].count == side.hist["turns"].count == 2
    assert side.hist["cache_hit_permille"].max == 500


def test_turns_count_only_requests_that_reported_their_cache() -> None:
    side = SessionSide()
    side.add_turn(_record("1", 100, 0))
    side.add_turn(_record("2", 200, 96))
    side.add_turn(_record("2", 200, None))  # usage without a cache count: not a zero
    side.add_turn(_record("2", None, None))
    assert side.by_turn == {"1": [100, 0], "2": [200, 96]}


def test_two_workers_merge_into_what_one_process_would_count() -> None:
    a, b, whole = SessionSide(), SessionSide(), SessionSide()
    for side, outcome, turn in ((a, "completed", "1"), (b, "failed", "1"), (b, "completed", "2")):
        side.add_session(_session(outcome))
        whole.add_session(_session(outcome))
        side.add_turn(_record(turn, 64, 16))
        whole.add_turn(_record(turn, 64, 16))
    shipped = wire.decode(SessionSide, wire.encode(a))
    shipped.merge(wire.decode(SessionSide, wire.encode(b)))
    assert wire.encode(shipped) == wire.encode(whole)
    assert not SessionSide() and not wire.decode(SessionSide, wire.encode(SessionSide()))


def _replayed(outcome: str, live: int, spliced: int, cut: int, *, recorded: int = 0) -> SessionAccount:
    s = _session(outcome, turns=live + spliced + recorded)
    s.replay = ReplayAccount(live=live, spliced=spliced, recorded=recorded, cut=cut)
    return s


def test_a_replays_account_sums_the_completed_sessions_turns_into_the_stage() -> None:
    a, b = SessionSide(), SessionSide()
    a.add_session(_replayed("completed", live=4, spliced=2, cut=1))
    a.add_session(_replayed("failed", live=1, spliced=1, cut=1))  # its turns never all went out
    b.add_session(_replayed("completed", live=5, spliced=0, cut=3))
    b.add_session(_replayed("completed", live=0, spliced=0, cut=0, recorded=3))
    b.add_session(_session("completed"))  # a synthetic session has no replay
    side = wire.decode(SessionSide, orjson.loads(orjson.dumps(wire.encode(a))))
    side.merge(wire.decode(SessionSide, orjson.loads(orjson.dumps(wire.encode(b)))))
    stats = StageStats()
    stats.sessions = side
    args: dict[str, Any] = {"client_health": {}, "client_bound_by": (), "warnings": ()}
    stage = stage_summary(stats, index=0, concurrency=3, duration_s=10.0, **args)
    sessions = stage.sessions
    assert sessions is not None
    assert sessions.replay == ReplaySummary(
        sessions=3, turns_live=9, turns_spliced=2, turns_recorded=3, turns_cut=4, sessions_spliced=1
    )
    line = render_stage(stage)
    assert (
        "replay of 3 recorded sessions: 14 turns, 9 live, 2 spliced (14%), 3 sent as recorded"
        " · 4 cut at max_tokens · 1 sessions spliced at least once"
    ) in line, line
    plain = SessionSide()
    plain.add_session(_session("completed"))
    assert not wire.encode(plain)["replay"]
