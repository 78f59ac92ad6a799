"""A distributed run across network namespaces: the simulator, the master and each worker on a
host of its own (namespace, address, link), so traffic really crosses a network; one worker's
link adds 20 ms on its way out, which must show in that worker's TTFT and not in its ITL.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.fleet import LocustFleet, read_jsonl
from tests.support.netns import Lab, can_use_netns
from tests.support.noise import Noise
from tests.support.truth import recomputed, request_total

pytestmark = [
    pytest.mark.timing,
    pytest.mark.e2e,
    pytest.mark.skipif(can_use_netns() is not None, reason=str(can_use_netns())),
]

DELAY_MS = 20.0
SIM, MASTER, FAST, SLOW = "10.200.0.1", "10.200.0.2", "10.200.0.11", "10.200.0.12"
SIM_ARGS = ("--ttft-ms", "50", "--step-ms", "20")


def p50_ms(values: list[int]) -> float:
    return statistics.median_low(values) / 1e6


def per_worker(records: list[dict[str, Any]]) -> tuple[float, float]:
    """TTFT p50 and per-token ITL p50 (ms) of a worker's measured, successful requests."""
    metrics = recomputed(records)
    return metrics["ttft"].exact_ms(0.5), metrics["itl"].exact_ms(0.5)


def test_workers_on_their_own_hosts_and_a_delayed_link(tmp_path: Path) -> None:
    log = tmp_path / "sim-requests.jsonl"
    with Lab() as lab:
        sim_ns, master_ns = lab.ns("sim"), lab.ns("master")
        fast_ns, slow_ns = lab.ns("fast"), lab.ns("slow")
        lab.bridge(sim_ns, f"{SIM}/24")
        lab.link(master_ns, f"{MASTER}/24", sim_ns)
        # Without netem both workers go through a delay line, so they differ only by the delay.
        userspace = not lab.has_netem(sim_ns)
        hows = [
            lab.link(fast_ns, f"{FAST}/24", sim_ns, 0.0, userspace=userspace),
            lab.link(slow_ns, f"{SLOW}/24", sim_ns, DELAY_MS, userspace=userspace),
        ]
        print(f"links: {hows}")
        with (
            lab.sim(
                sim_ns,
                SIM,
                tmp_path / "sim.out",
                "--ttft-ms",
                "50",
                "--step-ms",
                "20",
                "--request-log",
                str(log),
            ) as url,
            LocustFleet(tmp_path, url, master_host=MASTER) as fleet,
        ):
            fleet.start_master(
                "--max-tokens",
                "32",
                "--ignore-eos",
                workers=2,
                users=16,
                run_time="10s",
                prefix=lab.exec(master_ns),
            )
            workers = [fleet.start_worker(prefix=lab.exec(ns)) for ns in (fast_ns, slow_ns)]
            fast, slow = (fleet.worker_name(w) for w in workers)
            assert fleet.wait_master(90) == 0
            assert fleet.wait_workers(15) == [0, 0]
            time.sleep(0.5)  # the last entries reach the simulator's log
    logged = read_jsonl(log)
    by_address = Counter(e["client"].rsplit(":", 1)[0] for e in logged)
    records = fleet.records()
    assert sorted(by_address) == [FAST, SLOW], by_address
    assert request_total(fleet.summary) == sum(map(len, records.values())) == len(logged)
    assert (len(records[fast]), len(records[slow])) == (by_address[FAST], by_address[SLOW])
    timing = {name: per_worker(rs) for name, rs in records.items()}
    sim_ttft = {
        addr: p50_ms(
            [e["first_token_ns"] - e["arrival_ns"] for e in logged if e["client"].startswith(addr + ":")]
        )
        for addr in (FAST, SLOW)
    }
    print(
        f"per worker (TTFT p50, ITL p50 ms): fast {timing[fast]}, slow {timing[slow]}; "
        f"simulator TTFT p50 {sim_ttft}"
    )
    rise = timing[slow][0] - timing[fast][0]
    noise = Noise.of_summary(fleet.summary)
    noise.close(rise, DELAY_MS, 2, "the slow worker's TTFT rise against the link's delay")
    noise.close(timing[slow][1], timing[fast][1], 1, "ITL p50 of the slow link's worker against the fast's")
    noise.close(sim_ttft[SLOW], sim_ttft[FAST], 1, "the server's TTFT per worker (it saw no difference)")
