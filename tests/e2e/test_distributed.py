"""Distributed runs across real process boundaries: a Locust master and worker processes on
loopback, against the simulator, checked against the raw records and the simulator's own log.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from llmload.sim.process import SimProcess, start_sim
from tests.support.fleet import LocustFleet, Proc
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat
from tests.support.truth import check_quantiles, recomputed, request_total, wait_sim_settled

pytestmark = pytest.mark.e2e

CHAT = ("--max-tokens", "32", "--ignore-eos")
# A phase announcement is stamped, then the master writes what the phase change asks (a stage's
# results) and sends it over loopback to each worker, which hears it at its loop's next turn:
# milliseconds of work on either side (0.7-6.5 ms here); the machine's share is the judge's.
ANNOUNCE_BASE_MS = 10.0
# The simulator's own work around a step of 1,024 streams: their chunks, a few per ms (their
# deadlines spread over the step), and ~200 new requests a second to parse; a wake that finds
# that work due is late by it. (20 ms this once allowed: the machine's share is now the judge's.)
SIM_WORK_MS = 5.0


def _all_records(fleet: LocustFleet) -> list[dict[str, Any]]:
    return [r for records in fleet.records().values() for r in records]


def test_master_accounts_for_every_request_exactly(tmp_path: Path) -> None:
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        fleet.start_master(*CHAT, workers=3, users=24, run_time="8s")
        for _ in range(3):
            fleet.start_worker()
        assert fleet.wait_master(90) == 0
        assert fleet.wait_workers(15) == [0, 0, 0], "every worker quits when the run ends"
        logged = wait_sim_settled(sim)
    summary, records = fleet.summary, fleet.records()
    assert sorted(records) == ["worker-0", "worker-1", "worker-2"]
    lines = sum(len(r) for r in records.values())
    assert request_total(summary) == lines == len(logged), (request_total(summary), lines)
    listed = {f["process"]: f["records"] for f in summary["run"]["records"]}
    assert listed == {name: len(r) for name, r in records.items()}
    (stage,) = summary["stages"]
    # not timing: this says only that it ran (the exact accounting above is the claim); 24 streams
    # of 0.7 s requests answer about 270 in 8 s here, 72 in one CI run beside a busy loop
    assert stage["requests"]["ok"] > 0 and stage["requests"]["failed"] == 0
    assert summary["run"]["lost_workers"] == [] and summary["complete"]
    problems = check_quantiles(stage, recomputed(_all_records(fleet)))
    assert not problems, problems


@pytest.mark.timing
def test_1024_streams_over_4_worker_processes(tmp_path: Path, judge: Judge) -> None:
    judge.during(time.perf_counter_ns())
    with start_sim(["--ttft-ms", "50", "--step-ms", "500"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        cpu0, t0 = sim.counters()["cpu_ns"], time.monotonic()
        fleet.start_master(
            "--max-tokens", "10", "--ignore-eos", "--drain-s", "15", workers=4, users=1024, run_time="20s"
        )
        fleet.start_worker("--processes", "4")
        assert fleet.wait_master(120) == 0
        assert fleet.wait_workers(15) == [0], "the worker processes quit when the run ends"
        logged = wait_sim_settled(sim)
        sim_cpu = (sim.counters()["cpu_ns"] - cpu0) / 1e9 / (time.monotonic() - t0)
        stats = sim.stats()
        lateness = stats["lateness"]
    summary, records = fleet.summary, fleet.records()
    assert len(records) == 4
    lines = sum(len(r) for r in records.values())
    assert request_total(summary) == lines == len(logged), (request_total(summary), lines)
    (stage,) = summary["stages"]
    print(
        f"1024 streams: {stage['requests']}, sim CPU {sim_cpu:.2f} core, step lateness "
        f"p99 {lateness['p99_ns'] / 1e6:.1f} ms, ITL p50/p99 {stage['itl_ms']['p50']}/"
        f"{stage['itl_ms']['p99']} ms, client-bound {stage['client_bound']}, "
        f"health {stage['client_health']}"
    )
    assert stage["requests"]["ok"] >= 1024 and stage["requests"]["failed"] == 0
    # The simulator was not the bottleneck: it used well under a core (CPU time, which a busy
    # machine does not add to), and kept its 500 ms steps on time, late by no more than its own
    # work at a step (1,024 streams' chunks, a few per ms: SIM_WORK_MS) and what the machine did
    # to any process then (the whole run's window: the simulator's figure covers it all).
    assert sim_cpu < 0.6, sim_cpu
    judge.at_most(lateness["p99_ns"] / 1e6, SIM_WORK_MS, Stat.P99, "the simulator's step lateness p99")
    # one 500 ms step per token, read from a histogram within 1 % (5 ms), plus what the
    # simulator and the loops were late by over the measured window
    judge.server(stats)
    judge.client(summary)
    judge.close(stage["itl_ms"]["p50"], 500, 5.0, Stat.MEDIAN, "ITL p50 against the simulator's 500 ms step")
    users = Counter(r["user"] for rs in records.values() for r in rs)
    assert len(users) == 1024, "each stream is one user with its own id, fleet-wide"


def _connections(procs: list[Proc], sim: SimProcess, seen: dict[int, set[int]]) -> None:
    """Record each worker's local ports towards the simulator: its address in the sim's log."""
    for p in procs:
        try:
            conns = psutil.Process(p.popen.pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        seen.setdefault(p.popen.pid, set()).update(
            c.laddr.port for c in conns if c.raddr and c.raddr.port == sim.port
        )


def test_sigkill_of_a_worker_is_named_with_a_bound_of_the_loss(tmp_path: Path, judge: Judge) -> None:
    run_s = 12
    ports: dict[int, set[int]] = {}
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        master = fleet.start_master(*CHAT, workers=3, users=24, run_time=f"{run_s}s")
        workers = [fleet.start_worker() for _ in range(3)]
        victim = workers[1]
        deadline = time.monotonic() + 60
        while len(fleet.record_files()) < 3 or sim.counters()["requests_total"] < 24 * 3:
            # not timing: a poll's deadline, so that a run that never starts fails instead of hanging
            assert time.monotonic() < deadline and master.popen.poll() is None
            _connections(workers, sim, ports)
            time.sleep(0.2)
        spawned = time.monotonic()
        names = {p.popen.pid: fleet.worker_name(p) for p in workers}
        victim_name = names[victim.popen.pid]
        while time.monotonic() < spawned + 4:  # mid-run, several deltas after the warm-up
            _connections(workers, sim, ports)
            time.sleep(0.2)
        victim.kill()
        code = fleet.wait_master(run_s + 60)
        ended = time.monotonic()
        logged = wait_sim_settled(sim)
    summary = fleet.summary
    assert code == 5, master.output()[-3000:]
    # On time: start-up (interpreters and imports, seconds on a shared machine), the run, its
    # drain (one 0.7 s request) and the flush, in run_s + 15 s; what it must not have waited
    # out for the lost worker is a timeout of 30 s (final reports) or 120 s (drain).
    judge.at_most((ended - master.started) * 1000, (run_s + 15) * 1000, Stat.EVERY, "the master's whole run")
    (lost,) = summary["run"]["lost_workers"]
    assert lost["worker"] == victim_name
    assert not summary["complete"]
    owner = {port: pid for pid, ps in ports.items() for port in ps}
    served = Counter(owner.get(int(e["client"].rsplit(":", 1)[1])) for e in logged)
    assert served[None] == 0, "every request the simulator saw is attributed to a worker"
    listed = {f["process"]: f for f in summary["run"]["records"]}
    true_loss = served[victim.popen.pid] - listed[victim_name]["records"]
    print(
        f"lost {lost}; true loss {true_loss}; served {dict(served)}; master ended "
        f"{ended - master.started:.1f} s after its start ({run_s} s run)"
    )
    assert 0 < true_loss <= lost["requests_missing_at_most"]
    for p in workers:
        if p is not victim:
            name = names[p.popen.pid]
            lines = len(fleet.records().get(name, []))
            assert name in listed
            assert served[p.popen.pid] == lines == listed[name]["records"], name
    assert request_total(summary) == sum(f["records"] for f in listed.values())


@pytest.mark.timing
def test_sweep_runs_distributed_with_consistent_stages(tmp_path: Path, judge: Judge) -> None:
    judge.during(time.perf_counter_ns())  # a fleet's summary has no window of its own
    ttft_ms, step_ms, tokens = 50, 20, 32
    with (
        start_sim(["--ttft-ms", str(ttft_ms), "--step-ms", str(step_ms)]) as sim,
        LocustFleet(tmp_path, sim.url, locustfile="locustfiles/sweep.py") as fleet,
    ):
        fleet.start_master(*CHAT, "--levels", "2,8", "--stage-s", "6", workers=2)
        fleet.start_worker()
        fleet.start_worker()
        assert fleet.wait_master(120) == 0
        logged = wait_sim_settled(sim)
        judge.server(sim.stats())
    summary, records = fleet.summary, fleet.records()
    judge.client(summary)
    assert request_total(summary) == sum(len(r) for r in records.values()) == len(logged)
    stages = summary["stages"]
    assert [(s["index"], s["concurrency"]) for s in stages] == [(0, 2), (1, 8)]
    cycle_s = (ttft_ms + (tokens - 1) * step_ms) / 1000
    analytic = {s["index"]: s["concurrency"] * tokens / cycle_s for s in stages}
    late_ms: list[float] = []
    for s in stages:
        print(
            f"stage {s['index']}: {s['output_tok_per_s']} tok/s (model {analytic[s['index']]:.1f}), "
            f"lateness {s['announcement_lateness_s']}"
        )
        assert sorted(s["announcement_lateness_s"]) == ["worker-0", "worker-1"]
        for phases in s["announcement_lateness_s"].values():
            assert set(phases) == {"warmup", "measure", "drain"}
            late_ms += [v * 1000 for v in phases.values()]
    # Closed-loop streams of 0.67 s cycles, the tokens counted by when they were read: each
    # stream's ~6 s window holds a partial cycle at either edge (up to its 50 ms with no token,
    # 0.9 % of its tokens, the streams started together), and each request's turnaround (a
    # millisecond a cycle): the model's rate within 2 % (5 % this once allowed; 0.3 % read here),
    # the worst stage's over its own window.
    worst = max(stages, key=lambda s: abs(s["output_tok_per_s"] / analytic[s["index"]] - 1))
    judge.rate(
        worst["output_tok_per_s"],
        analytic[worst["index"]],
        0.02,
        f"stage {worst['index']}'s tok/s against the model, the worst stage",
        window_ms=worst["duration_s"] * 1000,
    )
    # not timing: no process hears of a phase before it was announced (one machine's wall clock)
    assert min(late_ms) > -50, late_ms
    judge.at_most(max(late_ms), ANNOUNCE_BASE_MS, Stat.EVERY, "a worker's announcement lateness, the latest")
    for name, rs in records.items():
        assert {r["stage"] for r in rs} == {0, 1}, name
    # One boundary for the fleet: at each phase change, every request tagged before it was sent
    # before every request tagged after it, whichever worker sent them (one CLOCK_MONOTONIC).
    every = _all_records(fleet)
    order = [(0, "warmup"), (0, "measure"), (0, "drain"), (1, "warmup"), (1, "measure"), (1, "drain")]
    sent = {key: [r["sent_ns"] for r in every if (r["stage"], r["phase"]) == key] for key in order}
    # A request tagged before an edge may be sent after one tagged after it only by how much
    # later one worker heard of the edge than the other: the announcement's own lateness.
    overlap_ms = max(
        (max(sent[before]) - min(sent[after])) / 1e6
        for before, after in itertools.pairwise(order)
        if sent[before] and sent[after]
    )
    judge.at_most(
        overlap_ms, ANNOUNCE_BASE_MS, Stat.EVERY, "a phase edge's overlap across workers, the worst"
    )
