"""A real Prometheus scrapes the exporter over a synthetic, growing run (no Locust involved).

The exporter runs in this process over a source that finishes synthetic records on a thread;
Prometheus scrapes it every second and loads exporters/prometheus/rules.yml. This pins the
exporter, the dashboard's queries and the rules to a real Prometheus even where Locust is not
involved; tests/e2e/test_prometheus.py does the same over a live Locust run.
"""

from __future__ import annotations

import random
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from llmload.config.settings import ExporterConfig
from llmload.core.record import RequestRecord
from llmload.export.prometheus import HISTOGRAMS, start_exporter
from llmload.metrics.classic import BY_KEY, ClassicStats
from tests.support.prometheus import (
    PROMETHEUS,
    RULES,
    PrometheusServer,
    dashboard_queries,
    recount,
    running_prometheus,
    substitute,
    synthetic_records,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        PROMETHEUS is None,
        reason="Debian's prometheus package is missing: run scripts/install-test-deps.sh as root",
    ),
]
LABELS = {
    "run_id": "standalone",
    "target": "http://127.0.0.1:1",
    "model": "synthetic",
    "scenario": "chat",
    "version": "test",
}
VARIABLES = {
    "run_id": "standalone",
    "target": LABELS["target"],
    "model": "synthetic",
    "__rate_interval": "10s",
}


class GrowingSource:
    """Finishes ``batches`` of synthetic records, ``every_s`` apart, on a thread."""

    def __init__(self, batches: int, every_s: float) -> None:
        self.records: list[RequestRecord] = []
        self._stats = ClassicStats()
        self._lock = threading.Lock()  # a real thread here; under gevent no lock is needed
        self._thread = threading.Thread(target=self._run, args=(batches, every_s), daemon=True)

    def _run(self, batches: int, every_s: float) -> None:
        rng = random.Random(11)
        for _ in range(batches):
            batch = synthetic_records(rng, 15)
            with self._lock:
                for r in batch:
                    self._stats.add(r)
                self.records += batch
            time.sleep(every_s)

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def classic(self) -> Mapping[int, ClassicStats]:
        with self._lock:
            copy = ClassicStats()
            copy.merge(self._stats)
        return {0: copy}

    def gauges(self) -> Mapping[str, float]:
        return {"users": 4, "in_flight": 2, "workers": 1, "stage": 0, "concurrency": 4}

    def health(self) -> Mapping[str, Mapping[str, float | None]]:
        return {"local": {"loop_lag_p99_ms": 1.0, "cpu_percent": 30.0, "events_per_read_mean": 1.1}}

    def labels(self) -> Mapping[str, str]:
        return LABELS


Scraped = tuple[GrowingSource, PrometheusServer, int]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    source = GrowingSource(batches=8, every_s=1.0)
    handle = start_exporter(ExporterConfig(port=0), source)
    workdir: Path = tmp_path_factory.mktemp("prometheus")
    with running_prometheus(workdir, {"llmload": [f"127.0.0.1:{handle.port}"]}, [RULES]) as prom:
        prom.wait_for("up{job='llmload'}", lambda r: bool(r) and r[0]["value"][1] == "1")
        source.start()
        source.join()
        time.sleep(3.5)  # a few scrapes and rule evaluations of the final numbers
        yield source, prom, handle.port
    handle.close()


def test_every_dashboard_query_returns_data(scraped: Scraped) -> None:
    _source, prom, _port = scraped
    checked = 0
    for title, expr in dashboard_queries():
        if any(engine in expr for engine in ("vllm:", "sglang:", "llamacpp:")):
            continue  # no server here; the Locust test checks the server-side panels
        assert prom.query(substitute(expr, VARIABLES)), (title, expr)
        checked += 1
    assert checked >= 25


def test_every_rule_is_healthy_and_returns_data(scraped: Scraped) -> None:
    _source, prom, _port = scraped
    rules = [rule for group in prom.api("rules")["groups"] for rule in group["rules"]]
    assert len(rules) == 9
    for rule in rules:
        assert rule["health"] == "ok", rule
        # An alert is "<recorded series> > <threshold>": evaluated with `bool` it always answers.
        expr = rule["query"].replace(" > ", " > bool ") if rule["type"] == "alerting" else rule["query"]
        assert prom.query(expr), rule["name"]
        if rule["type"] == "recording":
            assert prom.query(rule["name"]), rule["name"]


def test_increase_over_the_run_is_exact(scraped: Scraped) -> None:
    source, prom, _port = scraped
    at = time.time()
    values = prom.samples('llmload_generation_tokens_total{stage="0"}', at, 120)
    assert values[0][1] == 0  # the counter was exported before the first record
    total = sum(r.output_tokens for r in source.records)
    # At the last sample and with the first one at zero, increase() extrapolates nothing.
    last = values[-1][0]
    result = prom.query('increase(llmload_generation_tokens_total{stage="0"}[120s])', at=last)
    assert float(result[0]["value"][1]) == pytest.approx(total, rel=1e-9)


def test_exported_le_counts_equal_the_recount(scraped: Scraped) -> None:
    source, prom, port = scraped
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for key, (name, _help) in HISTOGRAMS.items():
        buckets = [s for s in families[name].samples if s.name == f"{name}_bucket"]
        les = [float(s.labels["le"]) for s in buckets[:-1]]
        spec = BY_KEY[key]
        assert [int(s.value) for s in buckets] == recount(source.records, spec.source, les, spec.seconds)
        # And Prometheus stored the same numbers.
        stored = prom.query(f'sum({name}_count{{stage="0"}})')
        assert float(stored[0]["value"][1]) == buckets[-1].value
