"""The Grafana dashboard and its provisioning, checked without a Grafana.

The JSON is read into the Grafana Foundation SDK's typed model and written back: the round trip
is the identity only if every key is one the model knows, with a value of its type. Whether each
query returns data is tests/e2e/test_prometheus.py's job, against a real Prometheus.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from typing import Any

import pytest

from llmload.export.prometheus import exposition
from tests.support.prometheus import DASHBOARD, REPO, dashboard_queries, synthetic_records
from tests.unit.export.test_prometheus import samples, source_with

GRAFANA = REPO / "exporters" / "grafana"
SDK = importlib.util.find_spec("grafana_foundation_sdk") is not None
NO_SDK = "grafana-foundation-sdk is not installed (the `test` extra installs it)"


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def build_module() -> Any:
    spec = importlib.util.spec_from_file_location("build_dashboard", GRAFANA / "build_dashboard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not SDK, reason=NO_SDK)
def test_round_trips_through_the_typed_model_unchanged() -> None:
    data = load()
    assert build_module().normalized(data) == data


@pytest.mark.skipif(not SDK, reason=NO_SDK)
def test_json_is_generated_from_build_dashboard() -> None:
    assert build_module().render() == DASHBOARD.read_text(), (
        "exporters/grafana/llmload.json is stale: run python exporters/grafana/build_dashboard.py"
    )


def test_variables_datasource_and_layout() -> None:
    data = load()
    variables = {v["name"]: v for v in data["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for name in ("run_id", "target", "model"):
        assert variables[name]["type"] == "query" and "llmload_run_info" in variables[name]["query"]["query"]
    ids = [p["id"] for p in data["panels"]]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for p in data["panels"]:
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24
        area = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not area & cells, p["title"]  # no two panels overlap
        cells |= area
        if p["type"] != "row":
            assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            refs = [t["refId"] for t in p["targets"]]
            assert len(refs) == len(set(refs)) and p["description"]


def test_every_panel_the_issue_asks_for() -> None:
    titles = " | ".join(p["title"] for p in load()["panels"])
    for needed in (
        "Output tokens/s",
        "Requests/s by outcome",
        "TTFT p50 / p90 / p99",
        "TTFOT p50",
        "ITL (per token) p50",
        "TPOT (per request) p50",
        "E2E latency p50",
        "TTFT heatmap",
        "ITL heatmap",
        "Users and in-flight",
        "Errors by kind",
        "Client loop lag",
        "Client CPU",
        "Events per read",
        "client vs server",
    ):
        assert needed in titles, needed
    exprs = " ".join(e for _, e in dashboard_queries())
    assert "vllm:" in exprs and "sglang:" in exprs


def test_llmload_queries_use_exported_names_and_every_filter() -> None:
    out = {s.name for s in samples(exposition(source_with({0: synthetic_records(random.Random(5), 20)})))}
    for title, expr in dashboard_queries():
        for name in re.findall(r"\bllmload_[a-z0-9_]+", expr):
            assert name in out, (title, name)
            # Each llmload selector filters by target and model (run_id through llmload_run_info).
            if name != "llmload_run_info":
                assert re.search(rf'{name}\{{target=~"\$target", model=~"\$model"', expr), (title, name)
        if "llmload_" in expr:
            assert 'llmload_run_info{run_id=~"$run_id"}' in expr, title
        for server in re.findall(r"\b(?:vllm|sglang):[a-z_]+\{([^}]*)\}", expr):
            assert server.startswith('model_name=~"$model"'), (title, expr)


def test_provisioning_points_at_the_dashboard_and_a_prometheus() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    sources = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yaml").read_text())
    (ds,) = sources["datasources"]
    assert ds["type"] == "prometheus" and ds["uid"] == "prometheus" and ds["jsonData"]["timeInterval"] == "1s"
    providers = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "llmload.yaml").read_text())
    (provider,) = providers["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].endswith("llmload")
