"""summary.json's contract: docs/summary.schema.json, and a reader for every older version.

Every summary an e2e or integration test reads is validated against the schema too
(``tests/support/schema.py``); these tests pin the versions down.
"""

from __future__ import annotations

import shutil
from dataclasses import MISSING, fields
from pathlib import Path

import orjson
import pytest

from llmload.errors import ResultsError
from llmload.export.rundata import read_summary
from llmload.metrics.confidence import Interval
from llmload.results.summary import (
    SCHEMA_VERSION,
    Cheapest,
    Exit,
    Headline,
    Level,
    RunInfo,
    Saturation,
    Summary,
    read,
    to_json,
)
from llmload.results.summary_stage import (
    GpuStage,
    HttpPhasesSummary,
    Latency,
    MeanMax,
    NamedStage,
    ReasoningSummary,
    ReplaySummary,
    ServerMetricsSummary,
    ServerTimingsSummary,
    SessionsSummary,
    Stage,
    StageCost,
    TenantShare,
    TenantsSummary,
)
from tests.support.schema import SCHEMA, problems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def test_the_schema_describes_the_version_written() -> None:
    schema = orjson.loads(SCHEMA.read_bytes())
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    assert problems({}) != []  # the validator runs (an empty object is no summary)


@pytest.mark.parametrize("run", ["engine-a", "engine-b", "engine-c"])
def test_a_version_1_summary_is_read_as_the_current_version(run: Path) -> None:
    raw = orjson.loads((FIXTURES / run / "summary.json").read_bytes())
    assert raw["schema_version"] == 1 and "exit" not in raw
    summary = to_json(read_summary(FIXTURES / run))
    assert problems(summary) == []
    assert summary["schema_version"] == SCHEMA_VERSION
    assert summary["exit"]["code"] == 0 and summary["exit"]["line"].startswith("ok: ")
    stage = summary["stages"][0]
    assert stage["attempts"]["finished"] == stage["requests"]["ok"] + stage["requests"]["failed"]
    assert stage["partial"] is False and summary["run"]["stopped"] is None


def test_a_summary_from_a_newer_llmload_is_refused_with_what_to_do(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "engine-a", tmp_path / "run")
    path = tmp_path / "run" / "summary.json"
    path.write_bytes(orjson.dumps({**orjson.loads(path.read_bytes()), "schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ResultsError, match=r"written by a newer llmload .* upgrade llmload"):
        read_summary(tmp_path / "run")


# Each typed part of the summary and the schema definition that describes it.
PARTS = {
    "stage": Stage,
    "named_stage": NamedStage,
    "server_timings": ServerTimingsSummary,
    "server_metrics": ServerMetricsSummary,
    "http_phases": HttpPhasesSummary,
    "reasoning": ReasoningSummary,
    "latency": Latency,
    "mean_max": MeanMax,
    "verdict": Exit,
    "level": Level,
    "interval": Interval,
    "stage_cost": StageCost,
    "gpu_stage": GpuStage,
    "cheapest": Cheapest,
    "headline": Headline,
    "saturation": Saturation,
    "run": RunInfo,
    "sessions": SessionsSummary,
    "session_replay": ReplaySummary,
    "tenants": TenantsSummary,
    "tenant_share": TenantShare,
}


@pytest.mark.parametrize("name", sorted(PARTS))
def test_the_types_and_the_schema_name_the_same_fields(name: str) -> None:
    schema = orjson.loads(SCHEMA.read_bytes())
    part = schema["$defs"][name]
    declared = {f.name for f in fields(PARTS[name])}
    required = {f.name for f in fields(PARTS[name]) if f.default is MISSING and f.default_factory is MISSING}
    assert set(part["properties"]) == declared
    assert set(part.get("required", [])) <= required


def test_the_summary_object_and_the_schema_name_the_same_fields() -> None:
    schema = orjson.loads(SCHEMA.read_bytes())
    assert set(schema["properties"]) == {f.name for f in fields(Summary)}


@pytest.mark.parametrize("run", ["engine-a", "engine-b", "engine-c"])
def test_reading_what_was_written_gives_the_same_summary(run: str) -> None:
    summary = read_summary(FIXTURES / run)
    text = orjson.dumps(to_json(summary))
    assert read(orjson.loads(text)) == summary
    assert problems(orjson.loads(text)) == []
