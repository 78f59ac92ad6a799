"""Trace replay against the simulator: each request sent once, at its time, by one process of
the fleet; the prefix blocks the trace's hash ids share reach the server's prefix cache; and
an Azure CSV sped up twice replays in half its span and ends the run by itself."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.sim.prefix_cache import BLOCK_TOKENS as SIM_BLOCK
from llmload.sim.process import start_sim
from llmload.sim.tokens import TOKENS_PER_MESSAGE
from llmload.workload.trace_prompts import BLOCK_TOKENS
from tests.e2e.conftest import RunLocust
from tests.support.fleet import free_port
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e
# Sent on time: the event loop's timer wakes the sender at the scheduled time, and its own work
# before the send stamp (a connection from the pool, opened first in a burst) is the client's
# (as test_open_loop's); the server reads the request after its trip over loopback.
SEND_BASE_MS = 2.0
ARRIVAL_BASE_MS = 3.0

B = BLOCK_TOKENS
# Three requests of ids found nowhere else: the second shares two blocks with the first, the
# third one; each is sent long after the one before it finished, so its blocks are cached.
MARKED = {
    10_000: (0.5, [9001, 9002, 9003]),
    10_001: (1.5, [9001, 9002, 9009]),
    10_002: (2.5, [9001, 9005, 9006]),
}


def mooncake_trace(path: Path, rate: float = 20.0, span_s: float = 4.0) -> list[dict[str, Any]]:
    """Poisson arrivals of unique lengths (a record finds its entry by its length) whose hash
    ids branch from a few roots, plus the three marked requests of 3 full blocks each."""
    rng = random.Random(7)
    entries, t, i = [], 0.0, 0
    while t < span_s:
        root = rng.randrange(3)
        ids = [root, 100 + root * 10 + rng.randrange(3)][: rng.randrange(1, 3)]
        entries.append({"timestamp": round(t * 1000, 3), "input_length": 200 + 7 * i, "output_length": 4,
                        "hash_ids": ids})  # fmt: skip
        t += rng.expovariate(rate)
        i += 1
    for length, (at, ids) in MARKED.items():
        entries.append({"timestamp": at * 1000, "input_length": 3 * B + length % 10, "output_length": 4,
                        "hash_ids": ids})  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    return sorted(entries, key=lambda e: e["timestamp"])


def all_records(results: Path) -> list[dict[str, Any]]:
    files = sorted(results.glob("requests*.jsonl"))
    return [orjson.loads(line) for path in files for line in path.read_bytes().splitlines() if line]


def cached_by_length(records: list[dict[str, Any]], served: list[dict[str, Any]]) -> dict[int, int]:
    truth = {s["client_request_id"]: s for s in served}
    return {r["prompt_tokens_requested"]: truth[r["id"]]["cached_tokens"] for r in records}


@pytest.mark.timing
@pytest.mark.parametrize("processes", [0, 2])
def test_each_request_is_sent_once_at_its_time_and_shares_its_blocks(
    run_locust: RunLocust, tmp_path: Path, processes: int, judge: Judge
) -> None:
    entries = mooncake_trace(tmp_path / "mooncake.jsonl")
    # A port of its own: another run's workers on this machine must not join this master.
    port = str(free_port())
    fleet = (
        ("--processes", str(processes), "--master-bind-port", port, "--master-port", port)
        if processes
        else ()
    )
    with start_sim() as sim:  # the default profile caches prefixes as vLLM does
        run = run_locust(
            sim.url, "--trace", str(tmp_path / "mooncake.jsonl"), "--ignore-eos", *fleet,
            locustfile="locustfiles/trace.py", run_time="60s",
        )  # fmt: skip
        served = sim.requests()
        judge.server(sim.stats())
    assert run.returncode == 0, run.output[-3000:]
    judge.during(min(s["arrival_ns"] for s in served), max(s["arrival_ns"] for s in served))
    judge.client(run.summary)
    records = all_records(run.results)
    assert len(records) == len(entries) == len(served)  # each entry sent once, by one process
    if processes:
        assert len(list(run.results.glob("requests-worker-*.jsonl"))) == processes
    by_length = {r["prompt_tokens_requested"]: r for r in records}
    assert sorted(by_length) == sorted(e["input_length"] for e in entries)
    assert all(r["phase"] == "measure" and r["outcome"] == "ok" for r in records)

    # The schedule is the trace's: each request scheduled at its entry's time from one start...
    start = min(r["scheduled_ns"] for r in records)
    for e in entries:
        scheduled_s = (by_length[e["input_length"]]["scheduled_ns"] - start) / 1e9
        # The schedule the client computed from one start (each process back-dates it to the
        # master's announcement, to the wall clock's microseconds).
        # not timing: computed by the client, not measured
        assert scheduled_s == pytest.approx(e["timestamp"] / 1000, abs=0.005)
    # ...and sent then (the median; the tail is this shared machine's), as the server saw too.
    late_ms = sorted((r["sent_ns"] - r["scheduled_ns"]) / 1e6 for r in records)
    judge.at_most(late_ms[len(late_ms) // 2], SEND_BASE_MS, Stat.MEDIAN, "send lateness, median")
    arrival = {s["client_request_id"]: s["arrival_ns"] for s in served}
    arrival_late_ms = sorted((arrival[r["id"]] - r["scheduled_ns"]) / 1e6 for r in records)
    judge.at_most(
        arrival_late_ms[len(arrival_late_ms) // 2],
        ARRIVAL_BASE_MS,
        Stat.MEDIAN,
        "arrival at the server, median",
    )

    # What the server's prefix cache found: exactly the shared blocks (behind the chat
    # template's opening tokens, in whole blocks of the simulator's cache).
    cached = cached_by_length(records, served)
    lengths = {length: 3 * B + length % 10 for length in MARKED}
    assert cached[lengths[10_000]] == 0
    assert cached[lengths[10_001]] == (TOKENS_PER_MESSAGE + 2 * B) // SIM_BLOCK * SIM_BLOCK
    assert cached[lengths[10_002]] == (TOKENS_PER_MESSAGE + B) // SIM_BLOCK * SIM_BLOCK


def test_an_azure_trace_at_twice_the_speed_replays_in_half_its_span(
    run_locust: RunLocust, tmp_path: Path, judge: Judge
) -> None:
    rng = random.Random(3)
    rows, times, t = ["TIMESTAMP,ContextTokens,GeneratedTokens"], [], 0.0
    for i in range(40):
        times.append(round(t, 7))
        rows.append(f"2023-11-16 18:15:{46 + t:010.7f},{100 + i},{rng.randrange(2, 6)}")
        t += rng.expovariate(10.0)
    path = tmp_path / "AzureLLMInferenceTrace_code.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with start_sim(["--ttft-ms", "10", "--step-ms", "5"]) as sim:
        began = time.perf_counter_ns()
        run = run_locust(
            sim.url, "--trace", str(path), "--trace-speed", "2", "--ignore-eos",
            locustfile="locustfiles/trace.py", run_time="60s",
        )  # fmt: skip
        took_ms = (time.perf_counter_ns() - began) / 1e6
    assert run.returncode == 0, run.output[-3000:]
    # The run ended with the trace (2 s of it, the interpreters' start, the drain), not at its
    # 60 s run time: half of that tells the two apart.
    judge.during(began)
    judge.at_most(took_ms, 30_000, Stat.EVERY, "the replay's whole run")
    records = run.records
    assert len(records) == 40 and all(r["outcome"] == "ok" for r in records)
    scheduled = sorted(r["scheduled_ns"] for r in records)
    span_s = times[-1] - times[0]
    # not timing: the schedule the client computed from the trace, at twice its speed
    assert (scheduled[-1] - scheduled[0]) / 1e9 == pytest.approx(span_s / 2, abs=0.005)
    # one pass of 40 requests lasts 40 mean gaps of the trace, at twice the speed
    stage = run.summary["stages"][0]
    # not timing: the schedule's rate, computed from the trace, not measured
    assert stage["rate_req_per_s"] == pytest.approx(2 * 40 / (span_s * 40 / 39), rel=1e-3)


@pytest.mark.timing
def test_a_looped_session_trace_replays_until_the_run_time_and_grows_each_session(
    run_locust: RunLocust, tmp_path: Path, judge: Judge
) -> None:
    # Two sessions taking turns every 0.1 s, each turn's prompt 100 words longer than its last.
    entries = [
        {"t": i / 10, "prompt_tokens": 100 * (i // 2 + 1), "max_tokens": 2, "session": "ab"[i % 2]}
        for i in range(10)
    ]
    path = tmp_path / "sessions.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    with start_sim() as sim:
        run = run_locust(
            # --warmup-s 1: the schedule starts once the user is up, not while it spawns
            sim.url, "--trace", str(path), "--trace-loop", "--ignore-eos", "--warmup-s", "1",
            locustfile="locustfiles/trace.py", run_time="7s",
        )  # fmt: skip
        served = {s["client_request_id"]: s for s in sim.requests()}
    assert run.returncode == 0, run.output[-3000:]
    stage = run.summary["stages"][0]
    assert stage["rate_req_per_s"] == pytest.approx(10.0)  # 10 requests a pass of 1 s
    records = sorted(run.records, key=lambda r: r["scheduled_ns"])
    assert len(records) >= 30  # passes back to back until -t, not one pass
    start = records[0]["scheduled_ns"]  # each pass right after the last: one every 0.1 s
    offsets_s = [(r["scheduled_ns"] - start) / 1e9 for r in records]
    # not timing: the schedule the client computed, passes back to back
    assert offsets_s == pytest.approx([k / 10 for k in range(len(records))], abs=0.001)
    # In the first pass, each turn finds the whole previous turn of its session cached, once
    # that turn's prefill is done (the simulator caches a prompt at the end of its prefill
    # step). A send made late on a busy machine can reach the server before its session's
    # previous turn was prefilled: it is then no test of the shared text, and left out.
    checked = 0
    for before, r in zip(records[0:8], records[2:10], strict=True):
        if served[before["id"]]["first_token_ns"] > served[r["id"]]["arrival_ns"]:
            continue
        previous = r["prompt_tokens_requested"] - 100
        assert served[r["id"]]["cached_tokens"] == (TOKENS_PER_MESSAGE + previous) // SIM_BLOCK * SIM_BLOCK
        checked += 1
    # A turn is left out only when its session's previous turn, scheduled 0.2 s before it, had
    # not its first token (a prefill step of well under 50 ms) when this one arrived: that turn
    # was late by 150 ms or more. As many as the machine's own share of such wake-ups allows.
    judge.during(records[0]["scheduled_ns"], max(r["done_ns"] for r in records[:10]))
    judge.few_late(8 - checked, 8, 150.0, "first-pass turns that overtook their session's previous one")
