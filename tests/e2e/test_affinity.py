"""ProcessRun affinity end to end: the agent scenario in a real Locust run against the simulator's
four replicas, behind its session router and behind round-robin, joined to the simulator's
ground truth by request id.

With the session router every request of a session lands on one replica, and each turn finds
the previous turn's prompt in that replica's cache (in whole 16-token blocks): the reusable share
of the prompt. Round-robin spreads a session's turns over the replicas, and the hit rate the
summary reports falls well below it.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust

pytestmark = pytest.mark.e2e

BLOCK = 16
AGENT = (
    "--turns",
    "4",
    "--tool-latency-ms",
    "30",
    "--tool-result-tokens",
    "48",
    "--prompt-tokens",
    "120",
    "--max-tokens",
    "24",
    "--ignore-eos",
)


def _run(run_locust: RunLocust, router: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    with start_sim(["--seed", "2", "--replicas", "4", "--router", router]) as sim:
        run = run_locust(sim.url, *AGENT, locustfile="locustfiles/agent.py", users=6, run_time="8s")
        truth = {e["client_request_id"]: e for e in sim.requests()}
    return run.summary["stages"][0], [r for r in run.records if r["outcome"] == "ok"], truth


def test_the_session_router_keeps_a_session_and_its_cache_where_round_robin_spreads_them(
    run_locust: RunLocust,
) -> None:
    stage, records, truth = _run(run_locust, "session")
    replicas: dict[str, set[int]] = defaultdict(set)
    for r in records:
        replicas[truth[r["id"]]["session"]].add(truth[r["id"]]["replica"])
        assert r["cached_tokens"] == truth[r["id"]]["cached_tokens"], r["id"]
    assert len(replicas) >= 6 and all(len(on) == 1 for on in replicas.values()), replicas
    assert len(set().union(*replicas.values())) > 1  # and sessions spread over the replicas
    # Each later turn found at least the previous turn's prompt, in whole blocks.
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["sent_ns"]):
        by_session[truth[r["id"]]["session"]].append(r)
    reusable = cached = 0
    for turns in by_session.values():
        for before, after in pairwise(turns):
            assert after["cached_tokens"] >= before["prompt_tokens"] // BLOCK * BLOCK, (
                before["id"],
                after["id"],
            )
            reusable += before["prompt_tokens"] // BLOCK * BLOCK
            cached += after["cached_tokens"]
    assert reusable > 0 and cached >= reusable
    by_turn = stage["sessions"]["cache_hit_rate_by_turn"]
    assert by_turn["1"] == 0 and by_turn["2"] > 0.4 and by_turn["4"] > by_turn["2"], by_turn

    # The same sessions behind round-robin: most move between replicas and find less.
    spread, records, truth = _run(run_locust, "round-robin")
    replicas = defaultdict(set)
    for r in records:
        replicas[truth[r["id"]]["session"]].add(truth[r["id"]]["replica"])
    moved = [on for on in replicas.values() if len(on) > 1]
    assert len(moved) >= len(replicas) // 2, replicas
    rr, sticky = spread["sessions"]["cache_hit_rate"], stage["sessions"]["cache_hit_rate"]
    assert rr["mean"] < 0.75 * sticky["mean"], (rr, sticky)
