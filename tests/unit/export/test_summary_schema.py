"""summary.json's contract: docs/summary.schema.json, and a reader for every older version.

Every summary an e2e or integration test reads is validated against the schema too
(``tests/support/schema.py``); these tests pin the versions down.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from llmload.errors import ResultsError
from llmload.export.rundata import read_summary
from llmload.export.summary import SCHEMA_VERSION
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
    summary = read_summary(FIXTURES / run)
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
