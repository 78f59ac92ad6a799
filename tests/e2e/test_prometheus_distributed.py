"""Distributed: the master's exposition is the merged fleet, exactly.

A master (serving ``--prometheus-port``, lingering 4 s) and three worker processes run against
the simulator. The last exposition the master served (during its linger) must hold every
worker's records: request and token counters equal to the records and ``summary.json``, and
every ``le`` count equal to its recount from the workers' ``requests-*.jsonl`` merged.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from llmload.export.prometheus import HISTOGRAMS
from llmload.metrics.classic import BY_KEY
from llmload.sim.process import start_sim
from tests.support.fleet import LocustFleet
from tests.support.prometheus import free_port, record_from_json, recount

pytestmark = pytest.mark.e2e


def test_master_serves_the_merged_fleet(tmp_path: Path) -> None:
    port = free_port()
    last: list[bytes] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.25):
            with (
                contextlib.suppress(OSError, http.client.HTTPException),
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp,
            ):
                last[:] = [resp.read()]

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    with start_sim(["--ttft-ms", "50", "--step-ms", "20"]) as sim, LocustFleet(tmp_path, sim.url) as fleet:
        fleet.start_master(
            "--max-tokens",
            "32",
            "--ignore-eos",
            "--prometheus-port",
            str(port),
            "--prometheus-linger-s",
            "4",
            workers=3,
            users=24,
            run_time="8s",
        )
        for _ in range(3):
            fleet.start_worker()
        assert fleet.wait_master(120) == 0
    stop.set()
    poller.join()
    assert last, "the master never served its metrics"
    lines = [line for records in fleet.records().values() for line in records]
    records = [record_from_json(line) for line in lines]
    families = {f.name: f for f in text_string_to_metric_families(last[0].decode())}

    by_outcome = {s.labels["outcome"]: s.value for s in families["llmload_requests"].samples}
    assert sum(by_outcome.values()) == len(lines) > 100
    assert by_outcome["ok"] == sum(line["outcome"] == "ok" for line in lines)
    (stage,) = fleet.summary["stages"]
    assert by_outcome["ok"] >= stage["requests"]["ok"]  # the summary counts the measured window
    generation = sum(s.value for s in families["llmload_generation_tokens"].samples)
    assert generation == sum(line["output_tokens"] for line in lines)
    for key, (name, _help) in HISTOGRAMS.items():
        spec = BY_KEY[key]
        buckets = [s for s in families[name].samples if s.name == f"{name}_bucket"]
        les = [float(s.labels["le"]) for s in buckets[:-1]]
        assert [int(s.value) for s in buckets] == recount(records, spec.source, les, spec.seconds), key
    assert families["llmload_connected_workers"].samples, "the master exports its workers"
    workers = {s.labels["worker"] for s in families["llmload_worker_clock_offset_seconds"].samples}
    assert workers == {f"worker-{i}" for i in range(3)}, "each worker's clock against the master's"
    assert {s.labels["worker"] for s in families["llmload_worker_users"].samples} == workers
