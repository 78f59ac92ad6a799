"""A distributed run across network namespaces: the simulator, the master and each worker on a
host of its own (namespace, address, link), so traffic really crosses a network; one worker's
link adds 20 ms on its way out, which must show in that worker's TTFT and not in its ITL.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.fleet import LocustFleet, read_jsonl
from tests.support.netns import Lab, can_use_netns
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat
from tests.support.truth import recomputed, request_total

pytestmark = [
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


def sim_stats(lab: Lab, ns: str, url: str) -> dict[str, Any]:
    """The simulator's ``/sim/stats``, asked from inside its namespace."""
    fetch = (
        "import urllib.request; "
        f"print(urllib.request.urlopen({url + '/sim/stats'!r}, timeout=10).read().decode())"
    )
    done = subprocess.run(
        [*lab.exec(ns), sys.executable, "-c", fetch], capture_output=True, text=True, timeout=30, check=True
    )
    stats: dict[str, Any] = json.loads(done.stdout)
    return stats


@pytest.mark.timing
def test_workers_on_their_own_hosts_and_a_delayed_link(tmp_path: Path, judge: Judge) -> None:
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
            stats = sim_stats(lab, sim_ns, url)
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
    # The server's own TTFTs, one worker's against the other's: only the simulator's lateness
    # and the machine's enter (it saw no difference), over the run (a fleet's summary has no
    # window of its own: the simulator's log gives it, on the one CLOCK_MONOTONIC).
    judge.during(min(e["arrival_ns"] for e in logged), max(e["done_ns"] or e["arrival_ns"] for e in logged))
    judge.server(stats)
    judge.close(
        sim_ttft[SLOW],
        sim_ttft[FAST],
        0.5,
        Stat.MEDIAN,
        "the server's TTFT p50 per worker (it saw no difference)",
    )
    # The clients' own: each median is its requests' TTFT, the link's delay the whole of the
    # difference (netem holds a packet to its timer's tick; the delay line, to its loop's turn).
    judge.client(fleet.summary)
    rise = timing[slow][0] - timing[fast][0]
    judge.close(rise, DELAY_MS, 1.0, Stat.MEDIAN, "the slow worker's TTFT rise against the link's delay")
    judge.close(
        timing[slow][1],
        timing[fast][1],
        0.5,
        Stat.MEDIAN,
        "ITL p50 of the slow link's worker against the fast's",
    )
