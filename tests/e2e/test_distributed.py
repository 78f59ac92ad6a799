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
from tests.support.noise import Noise
from tests.support.truth import check_quantiles, recomputed, request_total, wait_sim_settled

pytestmark = [pytest.mark.e2e, pytest.mark.timing]

CHAT = ("--max-tokens", "32", "--ignore-eos")


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
    assert stage["requests"]["ok"] > 100 and stage["requests"]["failed"] == 0
    assert summary["run"]["lost_workers"] == [] and summary["complete"]
    problems = check_quantiles(stage, recomputed(_all_records(fleet)))
    assert not problems, problems


def test_1024_streams_over_4_worker_processes(tmp_path: Path) -> None:
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
        lateness = sim.stats()["lateness"]
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
    # The simulator was not the bottleneck: it kept its 500 ms steps on time.
    assert sim_cpu < 0.6, sim_cpu
    assert lateness["p99_ns"] < 20e6, lateness
    # one 500 ms step per token: within a few ms plus what the simulator and the loops were late by
    noise = Noise.of_stages([stage], server_late_ms=lateness["p99_ns"] / 1e6)
    noise.close(stage["itl_ms"]["p50"], 500, 10, "ITL p50 against the simulator's 500 ms step")
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


def test_sigkill_of_a_worker_is_named_with_a_bound_of_the_loss(tmp_path: Path) -> None:
    run_s = 12
    ports: dict[int, set[int]] = {}
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        master = fleet.start_master(*CHAT, workers=3, users=24, run_time=f"{run_s}s")
        workers = [fleet.start_worker() for _ in range(3)]
        victim = workers[1]
        deadline = time.monotonic() + 60
        while len(fleet.record_files()) < 3 or sim.counters()["requests_total"] < 24 * 3:
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
    # On time: start-up, the run, its drain (one 0.7 s request) and the flush; no timeout
    # (30 s for final reports, 120 s of drain) was waited out for the lost worker.
    assert ended - master.started < run_s + 15, ended - master.started
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


def test_sweep_runs_distributed_with_consistent_stages(tmp_path: Path) -> None:
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
    summary, records = fleet.summary, fleet.records()
    assert request_total(summary) == sum(len(r) for r in records.values()) == len(logged)
    stages = summary["stages"]
    assert [(s["index"], s["concurrency"]) for s in stages] == [(0, 2), (1, 8)]
    cycle_s = (ttft_ms + (tokens - 1) * step_ms) / 1000
    for s in stages:
        analytic = s["concurrency"] * tokens / cycle_s
        print(
            f"stage {s['index']}: {s['output_tok_per_s']} tok/s (model {analytic:.1f}), "
            f"lateness {s['announcement_lateness_s']}"
        )
        assert abs(s["output_tok_per_s"] - analytic) < 0.05 * analytic
        assert sorted(s["announcement_lateness_s"]) == ["worker-0", "worker-1"]
        for phases in s["announcement_lateness_s"].values():
            assert set(phases) == {"warmup", "measure", "drain"}
            assert all(-0.05 < v < 0.25 for v in phases.values()), phases
    for name, rs in records.items():
        assert {r["stage"] for r in rs} == {0, 1}, name
    # One boundary for the fleet: at each phase change, every request tagged before it was sent
    # before every request tagged after it, whichever worker sent them (one CLOCK_MONOTONIC).
    every = _all_records(fleet)
    order = [(0, "warmup"), (0, "measure"), (0, "drain"), (1, "warmup"), (1, "measure"), (1, "drain")]
    sent = {key: [r["sent_ns"] for r in every if (r["stage"], r["phase"]) == key] for key in order}
    for before, after in itertools.pairwise(order):
        if sent[before] and sent[after]:
            assert max(sent[before]) < min(sent[after]) + 50e6, (before, after)
