"""Issue 9's open-loop acceptance: the rate and distribution reach the server, saturation shows
as client queue time, and a fleet splits one schedule exactly."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scistats  # type: ignore[import-untyped]

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.fleet import LocustFleet
from tests.support.schema import read_checked
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

FAST = ["--ttft-ms", "10", "--step-ms", "5"]
# Sent on time: the event loop's timer wakes the sender at the scheduled time, and its own work
# before the send stamp (a connection from the pool, opened first in a burst) is the client's.
SEND_BASE_MS = 2.0


def gaps_s(times_ns: list[int]) -> list[float]:
    times = sorted(times_ns)
    return [(b - a) / 1e9 for a, b in itertools.pairwise(times)]


def check_schedule(records: list[dict[str, Any]], rate: float, judge: Judge) -> None:
    """The client's schedule: exponential gaps at the rate (KS), and requests sent on time."""
    gaps = gaps_s([r["scheduled_ns"] for r in records])
    # not timing: the schedule is what the client computed (seeded draws), not what it measured
    assert scistats.kstest(gaps, "expon", args=(0, 1 / rate)).pvalue > 0.01
    # Sent on time, typically: the measured requests' median lateness; the tail is the machine's.
    late_ms = sorted((r["sent_ns"] - r["scheduled_ns"]) / 1e6 for r in records if r["phase"] == "measure")
    judge.at_most(late_ms[len(late_ms) // 2], SEND_BASE_MS, Stat.MEDIAN, "send lateness, median")


def check_server_arrivals(
    served: list[dict[str, Any]], rate: float, judge: Judge, bin_s: float = 0.25
) -> None:
    """What the server saw: the rate within 3 %, and Poisson counts per bin (chi-square).

    Counts per bin are what a Poisson process fixes at every time scale; unlike the gaps, they
    are not disturbed by the sub-millisecond jitter of the event loop and the network stack."""
    times = sorted(r["arrival_ns"] for r in served)
    span_s = (times[-1] - times[0]) / 1e9
    # 3 %: the spread of a Poisson count of ~3,000 arrivals (its own 1.8 %, the seeded draw's);
    # late sends at the span's two ends move it by what the judge adds.
    judge.rate((len(times) - 1) / span_s, rate, 0.03, "arrival rate at the server", window_ms=span_s * 1000)
    bins = int(span_s / bin_s)
    counts = [0] * bins
    for t in times:
        i = int((t - times[0]) / 1e9 / bin_s)
        if i < bins:
            counts[i] += 1
    observed, expected = _pooled(counts, rate * bin_s)
    # 0.001, not 0.01: a stall of the shared machine moves requests from one bin to the next and
    # pulled p to 0.005 once in CI; a wrong process (fixed gaps, bursts) reads p < 1e-6.
    assert scistats.chisquare(observed, expected).pvalue > 0.001, (counts, observed, expected)


def _pooled(counts: list[int], mean: float) -> tuple[list[int], list[float]]:
    """Observed and expected frequencies of each count, adjacent counts pooled until every
    expected frequency is at least 5 (the chi-square test's condition)."""
    n, top = len(counts), max(counts)
    observed: list[int] = []
    expected: list[float] = []
    obs, exp = 0, 0.0
    for k in range(top + 1):
        obs += sum(c == k for c in counts)
        exp += float(scistats.poisson.pmf(k, mean)) * n
        if exp >= 5:
            observed.append(obs)
            expected.append(exp)
            obs, exp = 0, 0.0
    tail = float(scistats.poisson.sf(top, mean)) * n
    observed[-1] += obs
    expected[-1] += exp + tail
    scale = sum(observed) / sum(expected)
    return observed, [e * scale for e in expected]


@pytest.mark.timing
def test_poisson_rate_and_distribution_reach_the_server(run_locust: RunLocust, judge: Judge) -> None:
    rate = 150.0
    with start_sim(FAST) as sim:
        run = run_locust(
            sim.url,
            "--rate",
            str(rate),
            "--max-tokens",
            "4",
            "--ignore-eos",
            locustfile="locustfiles/rate.py",
            users=1,
            run_time="20s",
        )
        served = sim.requests()
        judge.server(sim.stats())
    judge.client(run.summary)
    check_server_arrivals(served, rate, judge)
    check_schedule(run.records, rate, judge)
    assert len(run.records) == len(served)
    stage = run.summary["stages"][0]
    assert stage["rate_req_per_s"] == rate
    # the server keeps up: requests leave on time, the summary's queue time is that lateness
    judge.at_most(stage["queue_ms"]["p50"], SEND_BASE_MS, Stat.MEDIAN, "queue time p50")


@pytest.mark.timing
def test_saturation_shows_as_client_queue_and_e2e_from_scheduled(tmp_path: Path, judge: Judge) -> None:
    import subprocess
    import sys

    from tests.e2e.conftest import REPO

    with start_sim(["--profile", "vllm", "--max-running", "4"]) as sim:
        command = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            "locustfiles/sweep.py",
            "--headless",
            "--host",
            sim.url,
            "--rates",
            "2,20",
            "--stage-s",
            "8",
            "--max-in-flight",
            "12",
            "--max-tokens",
            "32",
            "--ignore-eos",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "sat",
            "--only-summary",
            "--loglevel",
            "WARNING",
            "--drain-s",
            "20",
        ]
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
        judge.server(sim.stats())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    summary = read_checked(tmp_path / "sat" / "summary.json")
    easy, saturated = summary["stages"]
    assert easy["rate_req_per_s"] == 2 and saturated["rate_req_per_s"] == 20
    judge.client({**summary, "stages": [easy]})
    judge.at_most(easy["queue_ms"]["p50"], SEND_BASE_MS, Stat.MEDIAN, "queue time p50 at 2 req/s")
    # 20 req/s into 4 slots of ~0.5 s requests: arrivals wait seconds for a free slot.
    # not timing: a floor that the overload makes, and noise only lengthens a wait
    assert saturated["queue_ms"]["p50"] > 200
    # not timing: a floor. E2E from the scheduled time includes that wait; E2E from sending does not
    assert saturated["e2e_scheduled_ms"]["p50"] > saturated["e2e_ms"]["p50"] + 200


@pytest.mark.timing
def test_a_fleet_splits_one_schedule_exactly(tmp_path: Path, judge: Judge) -> None:
    judge.during(time.perf_counter_ns())  # a fleet's summary has no window of its own
    rate = 150.0
    with start_sim(FAST) as sim, LocustFleet(tmp_path, sim.url, locustfile="locustfiles/rate.py") as fleet:
        fleet.start_master(
            "--rate", str(rate), "--max-tokens", "4", "--ignore-eos", workers=2, users=2, run_time="20s"
        )
        for _ in range(2):
            fleet.start_worker()
        assert fleet.wait_master(120) == 0, fleet.master.output()[-3000:] if fleet.master else ""
        fleet.wait_workers(30)
        served = sim.requests()
        judge.server(sim.stats())
    judge.client(fleet.summary)
    records = fleet.records()
    assert len(records) == 2
    assert sum(len(r) for r in records.values()) == len(served)
    # Each took every other arrival of the one schedule: over the span both covered (each stops
    # at its own moment at the end), their counts differ by the one at an edge at most.
    scheduled = [sorted(r["scheduled_ns"] for r in recs) for recs in records.values()]
    first, last = max(s[0] for s in scheduled), min(s[-1] for s in scheduled)
    counts = [sum(first <= t <= last for t in s) for s in scheduled]
    judge.exactly(abs(counts[0] - counts[1]), 0, 1, f"the workers' shares of the common span {counts}")
    check_server_arrivals(served, rate, judge)
    check_schedule([r for recs in records.values() for r in recs], rate, judge)
