"""Replicas behind the simulator's router, from its ground truth: multi-turn sessions over HTTP.

Each session is an agent's conversation: every turn resends the previous turn's prompt with more
words after it, under a session key header. With ``--router session`` a session's turns all land
on one replica, whose prefix cache holds the previous turn's prompt; round-robin scatters them
over replicas whose caches never saw it. Counts and tokens only: no timing is asserted.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from llmload.sim.prefix_cache import BLOCK_TOKENS
from llmload.sim.process import start_sim
from tests.support.wire import exchange

pytestmark = pytest.mark.integration

REPLICAS = 4
SESSIONS = 6  # not a multiple of REPLICAS: round-robin must not place a session by accident
TURNS = 4
FIRST_WORDS, MORE_WORDS = 100, 40


def _prompt(session: int, turn: int) -> str:
    """Turn ``turn`` of a session: its first word is the session's own, so sessions share nothing."""
    words = [f"s{session}"] + [f"s{session}w{i}" for i in range(FIRST_WORDS - 1 + turn * MORE_WORDS)]
    return " ".join(words)


def _headers(session: int) -> dict[str, str]:
    # half the sessions send AIPerf's header, half OpenCode's: both must place them
    name = "X-Session-Affinity" if session % 2 else "X-Session-ID"
    return {name: f"session-{session}"}


def _run(router: str, log: Path) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Every session's turns, interleaved as concurrent agents' are; the truth log and /metrics."""
    args = ["--replicas", str(REPLICAS), "--router", router, "--request-log", str(log)]
    with start_sim([*args, "--step-base-ms=1", "--step-per-seq-ms=0"]) as sim:
        for turn in range(TURNS):
            for session in range(SESSIONS):
                body = {"model": "sim", "prompt": _prompt(session, turn), "max_tokens": 2, "ignore_eos": True}
                response = exchange(sim.port, "/v1/completions", body, headers=_headers(session))
                assert response.status == 200, response.body
        _, raw = sim.get("/metrics")
    metrics = {}
    for line in raw.decode().splitlines():
        if line.startswith("vllm:prefix_cache_"):
            name, value = line.split("{", 1)[0], line.rsplit(" ", 1)[1]
            metrics[name] = float(value)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return sorted(entries, key=lambda e: int(e["id"].rsplit("-", 1)[1])), metrics


def _by_session(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    sessions: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        sessions.setdefault(entry["session"], []).append(entry)
    return sessions


def _hit_rate(entries: list[dict[str, Any]]) -> float:
    return float(sum(e["cached_tokens"] for e in entries) / sum(e["prompt_tokens"] for e in entries))


def _expected_cached(entries: list[dict[str, Any]]) -> list[int]:
    """What each request must have found: the full blocks of its session's longest earlier turn
    served by the same replica (sessions share no block, and no cache fills up here)."""
    expected = []
    for i, entry in enumerate(entries):
        earlier = [
            e["prompt_tokens"]
            for e in entries[:i]
            if (e["session"], e["replica"]) == (entry["session"], entry["replica"])
        ]
        expected.append(max(earlier, default=0) // BLOCK_TOKENS * BLOCK_TOKENS)
    return expected


def _check_metrics(entries: list[dict[str, Any]], metrics: dict[str, float]) -> None:
    """/metrics sums the replicas' counters: equal to the truth's totals."""
    assert metrics["vllm:prefix_cache_queries_total"] == sum(e["prompt_tokens"] for e in entries)
    assert metrics["vllm:prefix_cache_hits_total"] == sum(e["cached_tokens"] for e in entries)


def test_session_routing_keeps_each_session_on_one_replica_and_its_prefix_cached(tmp_path: Path) -> None:
    entries, metrics = _run("session", tmp_path / "session.jsonl")
    assert len(entries) == SESSIONS * TURNS and {e["outcome"] for e in entries} == {"ok"}
    sessions = _by_session(entries)
    assert len(sessions) == SESSIONS
    for turns in sessions.values():
        assert len({t["replica"] for t in turns}) == 1, turns
        assert turns[0]["cached_tokens"] == 0
        for before, now in itertools.pairwise(turns):
            # the previous turn's prompt, every full block of it, came from the replica's cache
            assert now["cached_tokens"] == before["prompt_tokens"] // BLOCK_TOKENS * BLOCK_TOKENS
    assert len({e["replica"] for e in entries}) > 1  # the sessions did not all hash alike
    _check_metrics(entries, metrics)
    print(f"session routing: prefix cache hit rate {_hit_rate(entries):.3f}")


def test_round_robin_spreads_sessions_and_finds_far_less(tmp_path: Path) -> None:
    session_entries, _ = _run("session", tmp_path / "session.jsonl")
    entries, metrics = _run("round-robin", tmp_path / "round-robin.jsonl")
    assert {e["replica"] for e in entries} == set(range(REPLICAS))
    assert [e["replica"] for e in entries] == [i % REPLICAS for i in range(SESSIONS * TURNS)]
    for turns in _by_session(entries).values():
        assert len({t["replica"] for t in turns}) > 1
    assert [e["cached_tokens"] for e in entries] == _expected_cached(entries)
    _check_metrics(entries, metrics)
    sticky, scattered = _hit_rate(session_entries), _hit_rate(entries)
    print(f"prefix cache hit rate: session {sticky:.3f}, round-robin {scattered:.3f}")
    # 6 sessions on 4 replicas in turn: a session's third and fourth turns meet its first and
    # second again, so round-robin finds something, but far less than session affinity
    assert scattered < 0.6 * sticky


def test_served_models_are_listed_and_each_requests_model_is_in_the_truth() -> None:
    args = ["--model", "base,lora-a", "--adapter-switch-ms", "50", "--step-base-ms=1", "--step-per-seq-ms=0"]
    with start_sim(args) as sim:
        listed = sim.get_json("/v1/models")
        for model in ("lora-a", "base", "unknown"):
            body = {"model": model, "prompt": "one two three", "max_tokens": 2, "ignore_eos": True}
            response = exchange(sim.port, "/v1/completions", body)
            assert response.status == 200 and json.loads(response.body)["model"] == model
        entries = sim.requests()
        durations = sim.stats()["step_duration"]
    assert isinstance(durations, dict)
    longest = durations["max_ns"]
    assert isinstance(listed, dict)
    assert [(m["id"], m["parent"]) for m in listed["data"]] == [("base", None), ("lora-a", "base")]
    assert [(e["model"], e["replica"], e["session"]) for e in entries] == [
        ("lora-a", 0, None), ("base", 0, None), ("unknown", 0, None)]  # fmt: skip
    assert isinstance(longest, int) and longest >= 50_000_000  # the adapter's first step loaded it
