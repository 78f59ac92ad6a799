"""Distributed: the master's exposition is the merged fleet, and agrees with summary.json."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from llmload.sim.process import start_sim
from tests.support.fleet import LocustFleet, free_port

pytestmark = pytest.mark.e2e


def scrape_until_final(url: str, timeout_s: float = 60) -> str:
    """The first exposition of the ended run, served while the master lingers after it.

    The run's exit code appears only once the master has merged every final report and judged
    the run; a scrape that merely failed (a timeout on a busy machine) says nothing of the end.
    """
    deadline, text = time.monotonic() + timeout_s, ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                text = response.read().decode()
        except OSError:
            pass
        if "\nllmload_run_exit_code" in text:
            return text
        time.sleep(0.5)
    return text


def test_master_exports_the_merged_fleet(tmp_path: Path) -> None:
    port = free_port()
    with start_sim(["--ttft-ms", "20", "--step-ms", "10"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        fleet.start_master(
            "--max-tokens",
            "16",
            "--ignore-eos",
            "--prometheus-port",
            str(port),
            "--prometheus-linger-s",
            "4",
            workers=2,
            users=8,
            run_time="8s",
        )
        for _ in range(2):
            fleet.start_worker()
        text = scrape_until_final(f"http://127.0.0.1:{port}/metrics")
        assert fleet.wait_master(60) == 0
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in ("llmload_requests_total", "llmload_generation_tokens_total"):
                totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    records = [r for recs in fleet.records().values() for r in recs]
    assert totals["llmload_requests_total"] == len(records)
    assert totals["llmload_generation_tokens_total"] == sum(r["output_tokens"] for r in records)
    requests = fleet.summary["stages"][0]["requests"]
    assert sum(requests.values()) == len(records)
