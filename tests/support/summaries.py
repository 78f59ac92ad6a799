"""Summaries for unit tests: the fields a test names over neutral values for the rest, read
through the same ``from_json`` as a real ``summary.json``."""

from __future__ import annotations

from typing import Any

from llmload.export.rundata import UNMEASURED_STAGE
from llmload.results.summary import SCHEMA_VERSION, Summary, from_json, read
from llmload.results.summary_stage import Stage


def stage_json(**fields: Any) -> dict[str, Any]:
    base = {
        **UNMEASURED_STAGE,
        "index": 0,
        "concurrency": 4,
        "requests": {"ok": 0, "failed": 0, "unfinished": 0, "warmup": 0, "drain": 0},
        "attempts": {"finished": 0, "failed": 0, "unfinished": 0, "errors": {}},
    }
    return {**base, **fields}


def stage(**fields: Any) -> Stage:
    return from_json(Stage, stage_json(**fields))


def summary(*stages: dict[str, Any], complete: bool = True, **run: Any) -> Summary:
    """``stages`` as ``stage_json`` fields; ``run``: fields of ``run`` over a local run's."""
    return read(
        {
            "schema_version": SCHEMA_VERSION,
            "complete": complete,
            "headline": None,
            "run": {
                "id": "test",
                "started_at": None,
                "target": "http://127.0.0.1:9",
                "model": None,
                "scenario": "chat",
                "options": {},
                "records": [],
                "reproducibility": {},
                "stopped": None,
                **run,
            },
            "server": {},
            "stages": [stage_json(**s) for s in stages],
            "warnings": [],
        }
    )
