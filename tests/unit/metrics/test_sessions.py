"""A stage's sessions: counted by how they ended, merged exactly, and carried over the wire."""

from __future__ import annotations

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.metrics.sessions import SessionSide
from llmload.workload.agents import SessionAccount


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
    shipped = SessionSide.from_dict(a.to_dict())
    shipped.merge(SessionSide.from_dict(b.to_dict()))
    assert shipped.to_dict() == whole.to_dict()
    assert not SessionSide() and SessionSide().to_dict() == {}
