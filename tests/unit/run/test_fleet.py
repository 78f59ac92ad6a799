"""The master's merge of worker deltas, in a plain process: no Locust, no sockets."""

from __future__ import annotations

from typing import Any

from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.core.stop import stop_of
from llmload.metrics import wire
from llmload.metrics.aggregate import StageStats
from llmload.run.fleet import Fleet


def delta(
    seq: int,
    *,
    final: bool = False,
    users: int = 4,
    completed: int = 0,
    stopped: dict[str, Any] | None = None,
    stats: StageStats | None = None,
) -> dict[str, Any]:
    return {
        "seq": seq,
        "name": "worker-0",
        "model": "m",
        "final": final,
        "stages": {} if stats is None else {"0": wire.encode(stats)},
        "completed": {"0": completed},
        "in_flight_measured": {"0": 0},
        "health": {},
        "lateness": {},
        "users": users,
        "records": completed,
        "records_file": "r.jsonl",
        "warnings": ["w"],
        "stopped": stopped,
    }


def test_deltas_merge_once_each_and_progress_counts_live_workers() -> None:
    fleet = Fleet()
    fleet.record(Announcement(0, Phase.WARMUP, 100.0, 4))
    stats = StageStats()
    stats.counts.records_warmup = 3
    fleet.on_delta("a", delta(0, completed=3, stats=stats))
    fleet.on_delta("a", delta(0, completed=3, stats=stats))  # a duplicate is never merged twice
    assert fleet.stats[0].counts.records_warmup == 3
    assert fleet.progress().completed == 3 and fleet.model == "m" and fleet.warnings == ["w"]
    fleet.mark_lost(["a"])
    assert fleet.progress().completed == 0  # a lost worker's counts no longer pace the stage


def test_a_final_worker_is_never_lost_and_nobody_is_waited_for() -> None:
    fleet = Fleet()
    fleet.on_delta("a", delta(0))
    fleet.on_delta("b", {**delta(0), "name": "worker-1"})
    assert sorted(fleet.waiting_for()) == ["worker-0", "worker-1"]
    fleet.on_delta("a", delta(1, final=True))
    fleet.mark_lost(["a", "b"])
    assert [w.lost for w in fleet.workers.values()] == [False, True]
    assert fleet.waiting_for() == []


def test_the_lost_bound_is_users_times_requests_per_shortest_e2e() -> None:
    fleet = Fleet()
    stats = StageStats()
    stats.hist["e2e"].add(500_000_000)  # its fastest request took 0.5 s
    fleet.on_delta("a", delta(0, users=4, stats=stats))
    worker = fleet.workers["a"]
    fleet.mark_lost(["a"])
    (report,) = fleet.lost_report(worker.last_heard_wall + 2.0, max_tokens=100)
    # 2 s of silence: each of 4 users had one request in flight and could finish 4 more.
    assert report.requests_missing_at_most == 4 * (1 + 4)
    assert report.output_tokens_missing_at_most == 20 * 100


def test_the_first_worker_to_stop_the_run_is_named() -> None:
    fleet = Fleet()
    fleet.on_delta("a", delta(0, stopped={"by": "fail_fast", "kind": "http_5xx"}))
    fleet.on_delta("b", {**delta(0, stopped={"by": "interrupt"}), "name": "worker-1"})
    assert fleet.stopped == stop_of({"by": "fail_fast", "kind": "http_5xx", "process": "worker-0"})
