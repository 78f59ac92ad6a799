"""The collector's exposition: exact ``le`` counts, bounded labels, promtool-clean, served over HTTP."""

from __future__ import annotations

import random
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from llmload.config.settings import ExporterConfig
from llmload.core.record import RequestRecord
from llmload.export.prometheus import (
    GAUGES,
    HEALTH,
    HISTOGRAMS,
    OUTCOMES,
    LlmloadCollector,
    exposition,
    make_registry,
    render,
    start_exporter,
)
from llmload.metrics.catalog import CATALOG
from llmload.metrics.classic import BY_KEY, ClassicStats
from tests.support.prometheus import PROMTOOL, recount, synthetic_records

ALLOWED_LABELS = {
    "target",
    "model",
    "scenario",
    "stage",
    "outcome",
    "worker",
    "le",
    "run_id",
    "version",
    "tenant",
}


@dataclass
class FakeSource:
    stages: dict[int, ClassicStats] = field(default_factory=dict)
    values: dict[str, float] = field(
        default_factory=lambda: {"users": 8, "in_flight": 5, "workers": 2, "stage": 1, "concurrency": 8}
    )
    per_worker: dict[str, dict[str, float | None]] = field(
        default_factory=lambda: {
            "w1": {"loop_lag_p99_ms": 2.5, "cpu_percent": 50.0, "events_per_read_mean": 1.25},
            "w2": {"loop_lag_p99_ms": None, "cpu_percent": 12.0, "events_per_read_mean": None},
        }
    )

    def classic(self) -> Mapping[int, ClassicStats]:
        return self.stages

    def gauges(self) -> Mapping[str, float]:
        return self.values

    def health(self) -> Mapping[str, Mapping[str, float | None]]:
        return self.per_worker

    def labels(self) -> Mapping[str, str]:
        return {
            "run_id": "run-1",
            "target": "http://127.0.0.1:8000",
            "model": "m",
            "scenario": "chat",
            "version": "0.1.0",
        }


def source_with(records: dict[int, list[RequestRecord]]) -> FakeSource:
    source = FakeSource()
    for stage, recs in records.items():
        source.stages[stage] = ClassicStats()
        for r in recs:
            source.stages[stage].add(r)
    return source


def samples(text: bytes) -> list[Sample]:
    return [s for fam in text_string_to_metric_families(text.decode()) for s in fam.samples]


def one(all_samples: list[Sample], name: str, **labels: str) -> float:
    found = [
        s.value
        for s in all_samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_le_counts_equal_the_recount_from_records() -> None:
    rng = random.Random(7)
    records = {0: synthetic_records(rng, 150, stage=0), 1: synthetic_records(rng, 90, stage=1)}
    out = samples(exposition(source_with(records)))
    for key, (name, _help) in HISTOGRAMS.items():
        spec = BY_KEY[key]
        for stage, recs in records.items():
            buckets = [s for s in out if s.name == f"{name}_bucket" and s.labels["stage"] == str(stage)]
            les = [float(s.labels["le"]) for s in buckets]
            assert les[-1] == float("inf") and les[:-1] == sorted(les[:-1])
            exported = [int(s.value) for s in buckets]
            assert exported == recount(recs, spec.source, les[:-1], spec.seconds), (key, stage)
            assert one(out, f"{name}_count", stage=str(stage)) == exported[-1]


def test_counters_gauges_health_and_run_info() -> None:
    records = synthetic_records(random.Random(8), 120)
    out = samples(exposition(source_with({0: records})))
    for outcome in OUTCOMES:
        expected = sum(r.outcome == outcome for r in records)
        assert one(out, "llmload_requests_total", stage="0", outcome=outcome) == expected
    assert one(out, "llmload_generation_tokens_total") == sum(r.output_tokens for r in records)
    assert one(out, "llmload_prompt_tokens_total") == sum(r.prompt_tokens or 0 for r in records)
    assert one(out, "llmload_users") == 8 and one(out, "llmload_in_flight_requests") == 5
    assert one(out, "llmload_connected_workers") == 2 and one(out, "llmload_stage") == 1
    assert one(out, "llmload_stage_concurrency") == 8
    assert one(out, "llmload_client_loop_lag_p99_seconds", worker="w1") == pytest.approx(0.0025)
    assert one(out, "llmload_client_cpu_ratio", worker="w2") == pytest.approx(0.12)
    assert one(out, "llmload_client_events_per_read", worker="w1") == 1.25
    # Not measured yet: no sample, rather than a zero that would read as "no lag".
    assert not [
        s for s in out if s.name == "llmload_client_loop_lag_p99_seconds" and s.labels["worker"] == "w2"
    ]
    assert one(out, "llmload_run_info", run_id="run-1", scenario="chat", version="0.1.0") == 1


def test_labels_are_bounded_and_common() -> None:
    out = samples(exposition(source_with({0: synthetic_records(random.Random(9), 50)})))
    for s in out:
        assert set(s.labels) <= ALLOWED_LABELS, s
        assert s.labels["target"] == "http://127.0.0.1:8000" and s.labels["model"] == "m", s
    assert {s.labels["run_id"] for s in out if "run_id" in s.labels} == {"run-1"}
    assert all(s.name == "llmload_run_info" for s in out if "run_id" in s.labels)


def test_counters_start_at_zero_before_any_record() -> None:
    # Stage 0 is exported from the first scrape, so increase() over a run misses nothing.
    out = samples(exposition(FakeSource()))
    assert one(out, "llmload_generation_tokens_total", stage="0") == 0
    assert one(out, "llmload_requests_total", stage="0", outcome="ok") == 0
    assert one(out, "llmload_inter_token_latency_seconds_count", stage="0") == 0


def test_gauges_missing_from_the_source_are_left_out() -> None:
    source = FakeSource(values={"users": 3})
    names = {s.name for s in samples(exposition(source))}
    assert "llmload_users" in names and "llmload_in_flight_requests" not in names


def test_own_registry_never_the_global_one() -> None:
    source = FakeSource()
    registry = make_registry(source)
    assert registry is not REGISTRY
    assert REGISTRY.get_sample_value("llmload_users") is None
    assert (
        registry.get_sample_value(
            "llmload_users", {"target": "http://127.0.0.1:8000", "model": "m", "scenario": "chat"}
        )
        == 8
    )
    assert LlmloadCollector(source).describe() == []


def test_catalog_names_are_exported() -> None:
    out = {s.name for s in samples(exposition(source_with({0: synthetic_records(random.Random(1), 30)})))}
    for metric in CATALOG:
        if metric.prometheus is not None:
            assert any(n == metric.prometheus or n.startswith(metric.prometheus + "_") for n in out), metric
    families = {name for name, _ in HISTOGRAMS.values()} | {n for n, _ in GAUGES.values()}
    families |= {n for n, _, _ in HEALTH.values()}
    assert len(families) == len(HISTOGRAMS) + len(GAUGES) + len(HEALTH)


@pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: scripts/install-test-deps.sh installs it")
def test_promtool_check_metrics_is_clean(tmp_path: Path) -> None:
    text = exposition(source_with({0: synthetic_records(random.Random(2), 80), 3: []}))
    done = subprocess.run([str(PROMTOOL), "check", "metrics"], input=text, capture_output=True, check=False)
    assert done.returncode == 0 and not done.stdout and not done.stderr, done


def test_fast_rendering_is_byte_identical_to_prometheus_clients() -> None:
    rng = random.Random(4)
    big = ClassicStats()
    for r in synthetic_records(rng, 40):
        big.add(r)
    for _ in range(15):  # counts past 1e6 switch to Go's exponent notation ("1.2e+06")
        big.merge(big)
    odd = FakeSource()
    odd.labels = lambda: {"target": 'http://h"\\x\nq', "model": "m/ü", "scenario": "", "run_id": "r"}  # type: ignore[method-assign]
    cases = [
        FakeSource(),
        source_with({0: synthetic_records(rng, 60), 2: [], 11: synthetic_records(rng, 5)}),
        FakeSource(stages={0: big}),
        odd,
    ]
    for source in cases:
        assert render(source) == exposition(source)
    assert b"e+0" in render(cases[2])


def test_served_over_http_on_a_free_port() -> None:
    source = source_with({0: synthetic_records(random.Random(3), 20)})
    handle = start_exporter(ExporterConfig(port=0), source)
    try:
        assert handle.port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{handle.port}/metrics", timeout=5) as resp:
            body = resp.read()
        assert body == exposition(source) == render(source)
        source.values["users"] = 99  # read at scrape time, not at start
        with urllib.request.urlopen(f"http://127.0.0.1:{handle.port}/metrics", timeout=5) as resp:
            assert one(samples(resp.read()), "llmload_users") == 99
    finally:
        handle.close()


GEVENT_SCRIPT = """
from gevent import monkey
monkey.patch_all()
import gevent, urllib.request
from llmload.config.settings import ExporterConfig
from llmload.export.prometheus import start_exporter
from tests.unit.export.test_prometheus import FakeSource
handle = start_exporter(ExporterConfig(port=0), FakeSource())
ticks = []
busy = gevent.spawn(lambda: [ticks.append(gevent.sleep(0.01)) for _ in range(20)])
with urllib.request.urlopen(f"http://127.0.0.1:{handle.port}/metrics", timeout=5) as resp:
    body = resp.read()
busy.join()
handle.close()
print(len(ticks), b"llmload_users" in body)
"""


def test_serves_in_a_gevent_monkey_patched_process() -> None:
    # Locust patches everything before llmload runs: the server thread becomes a greenlet.
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", GEVENT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20", "True"]


def test_the_exit_code_appears_once_the_run_has_ended() -> None:
    source = source_with({})
    assert not [s for s in samples(exposition(source)) if s.name == "llmload_run_exit_code"]
    source.values = {**source.values, "exit_code": 130}
    assert one(samples(exposition(source)), "llmload_run_exit_code") == 130


def test_tenants_have_series_of_their_own_that_add_up_to_the_stage() -> None:
    records = synthetic_records(random.Random(11), 90)
    source = FakeSource(stages={0: ClassicStats()})
    for i, r in enumerate(records):
        source.stages[0].add(r, "chat" if i % 3 else "batch")
    out = samples(render(source))
    assert render(source) == exposition(source)
    assert {s.labels["tenant"] for s in out if "tenant" in s.labels} == {"chat", "batch"}
    outcomes = {s.labels["outcome"] for s in out if s.name == "llmload_tenant_requests_total"}
    for outcome in outcomes:
        parts = sum(
            one(out, "llmload_tenant_requests_total", outcome=outcome, tenant=t) for t in ("chat", "batch")
            if any(s.labels.get("tenant") == t and s.labels.get("outcome") == outcome for s in out)
        )  # fmt: skip
        assert parts == one(out, "llmload_requests_total", outcome=outcome)
    counts = [
        one(out, "llmload_tenant_time_to_first_token_seconds_count", tenant=t) for t in ("chat", "batch")
    ]
    assert sum(counts) == one(out, "llmload_time_to_first_token_seconds_count")
    # shipped from a worker and back, the tenants' parts come along
    assert ClassicStats.from_dict(source.stages[0].to_dict()) == source.stages[0]
    # a run without tenants exports no tenant series at all
    plain = samples(render(source_with({0: records})))
    assert not any("tenant" in s.labels or "tenant" in s.name for s in plain)
