"""The metric catalog: complete, consistent, and the source of a docs/metrics.md kept current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from llmload.metrics.catalog import CATALOG, MetricDef, Scope, Unit, by_key
from llmload.metrics.catalog_doc import render_markdown

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "metrics.md"

# Every metric docs/metrics.md defines, by catalog key, and the histograms the aggregation keeps.
REQUIRED = {
    "ttft", "ttfot", "connect", "queue", "e2e", "e2e_scheduled", "output_tokens",
    "prompt_tokens", "tpot", "decode_speed", "itl", "chunk_gap", "tokens_per_event",
    "events_per_read", "finish_reason", "outcome", "output_throughput", "input_throughput",
    "total_throughput", "request_throughput", "goodput", "single_stream", "peak_throughput",
    "error_rate", "loop_lag", "client_cpu",
}  # fmt: skip


def test_docs_are_generated_from_the_catalog() -> None:
    assert render_markdown() == DOC.read_text(encoding="utf-8"), (
        "docs/metrics.md is stale: run `make docs` (python -m llmload.metrics.catalog_doc)"
    )


def test_module_prints_the_document() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "llmload.metrics.catalog_doc"],
        capture_output=True,
        check=True,
        encoding="utf-8",
    ).stdout
    assert out == render_markdown()


def test_catalog_covers_every_metric_once() -> None:
    keys = [m.key for m in CATALOG]
    assert len(keys) == len(set(keys))
    assert set(keys) >= REQUIRED
    summary_keys = [m.summary_key for m in CATALOG]
    assert len(summary_keys) == len(set(summary_keys))


@pytest.mark.parametrize("metric", CATALOG, ids=lambda m: m.key)
def test_definitions_are_complete(metric: MetricDef) -> None:
    assert metric.unit in get_args(Unit)
    assert metric.scope in get_args(Scope)
    assert re.fullmatch(r"[a-z][a-z0-9_]*", metric.key)
    for text in (metric.title, metric.formula, metric.definition, metric.peers):
        assert text.strip() == text and text
    if metric.unit == "ms":
        assert metric.summary_key.endswith("_ms")
    if metric.prometheus is not None:
        assert re.fullmatch(r"llmload_[a-z0-9_]+", metric.prometheus)
        if metric.unit == "ms":
            assert metric.prometheus.endswith("_seconds")


def test_by_key() -> None:
    assert by_key("ttft").summary_key == "ttft_ms"
    assert by_key("itl").scope == "token"
    with pytest.raises(KeyError, match="nope"):
        by_key("nope")


def test_document_has_every_section_and_metric() -> None:
    doc = render_markdown()
    for heading in (
        "## Words",
        "## Timestamps of one request",
        "## Per request",
        "## Per token",
        "## Per read",
        "## Per stage",
        "## Percentiles",
        "## Token counts",
        "## Client health: the client-bound rule",
    ):
        assert f"\n{heading}\n" in doc
    for metric in CATALOG:
        assert f"`{metric.key}`" in doc
    for line in doc.splitlines():
        if line.startswith("| "):  # every table row has as many cells as its header
            assert line.replace("\\|", "").count("|") in (3, 8)
