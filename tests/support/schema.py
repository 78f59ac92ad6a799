"""summary.json as every test reads it: validated against docs/summary.schema.json first."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import orjson

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "summary.schema.json"


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = orjson.loads(SCHEMA.read_bytes())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(summary: Any) -> list[str]:
    """Where ``summary`` breaks the schema, one line each (empty: it is a valid summary)."""
    return [_line(e) for e in _validator().iter_errors(summary)]


def _line(error: jsonschema.ValidationError) -> str:
    # An anyOf's own message starts with the whole instance, which hides the reason: name the
    # deepest failure among its branches instead.
    while error.context:
        error = max(error.context, key=lambda e: len(e.absolute_path))
    return f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:300]}"


def read_checked(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(path.read_bytes())
    found = problems(data)
    assert not found, f"{path} breaks docs/summary.schema.json:\n" + "\n".join(found[:20])
    return data
