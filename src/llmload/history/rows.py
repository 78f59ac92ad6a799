"""A run's record as the store's rows, and back: the one mapping both stores use, so a record
comes out of PostgreSQL exactly as out of SQLite (docs/history.md#the-store).

Rows are dicts by column name (``schema.py``'s columns). A flag goes in as a bool (SQLite keeps
0 or 1, PostgreSQL a BOOLEAN) and comes back a bool either way; the server's models and launch
arguments go in as JSON text; a run that never started has ``started_at`` '' in the store (it
is part of a unique key, so it cannot be null) and ``None`` in its record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import orjson

from llmload.results.comparable import ComparabilityKey
from llmload.results.runrecord import ClientInfo, RunRecord, ServerPrint, StageRecord

Row = Mapping[str, Any]
_KEY_FIELDS = tuple(f.name for f in fields(ComparabilityKey))
_STAGE_FIELDS = tuple(f.name for f in fields(StageRecord) if f.name != "index")


@dataclass(frozen=True, slots=True)
class Pin:
    """A named baseline: the run it names, by its id and start."""

    name: str
    run_id: str
    started_at: str | None
    pinned_s: float


@dataclass(frozen=True, slots=True)
class Waiver:
    """A regression a person accepted: the run, why, who and when."""

    run_id: str
    started_at: str | None
    reason: str
    accepted_by: str | None
    accepted_s: float


def run_row(record: RunRecord, recorded_s: float) -> dict[str, object]:
    """The run's row of ``runs``, without its row number (the database gives it)."""
    return {
        "run_id": record.run_id,
        "started_at": record.started_at or "",
        "started_s": record.started_s,
        "recorded_s": recorded_s,
        "results_dir": record.results_dir,
        "key": record.key.hash,
        **asdict(record.key),
        "engine": record.server.engine,
        "engine_version": record.server.version,
        "server_models": orjson.dumps(record.server.models).decode(),
        "launch_args": orjson.dumps(record.server.launch_args).decode(),
        "client_version": record.client.version,
        "client_host": record.client.host,
        "git_commit": record.client.git_commit,
        "exit_code": record.exit_code,
        "verdict": record.verdict,
        "verdict_line": record.verdict_line,
        "complete": record.complete,
        "single_stream_tok_per_s": record.single_stream_tok_per_s,
        "peak_tok_per_s": record.peak_tok_per_s,
        "peak_concurrency": record.peak_concurrency,
    }


def label_rows(record: RunRecord, run: int) -> list[tuple[int, str, str]]:
    """``(run, name, value)`` for each of the run's labels, in the order given."""
    return [(run, name, value) for name, value in record.labels]


def stage_rows(record: RunRecord, run: int) -> list[dict[str, object]]:
    """The run's rows of ``stages``, one per stage, repeats apart."""
    return [
        {
            "run": run,
            "stage": stage.index,
            "level": stage.level,
            **{name: getattr(stage, name) for name in _STAGE_FIELDS},
        }
        for stage in record.stages
    ]


def insert(table: str, row: Mapping[str, object], param: str) -> str:
    """``INSERT`` of ``row``'s columns, each value as ``param`` names it (``:{}``, ``%({})s``)."""
    values = ", ".join(param.format(column) for column in row)
    return f"INSERT INTO {table} ({', '.join(row)}) VALUES ({values})"


def records(runs: Iterable[Row], labels: Iterable[Row], stages: Iterable[Row]) -> list[RunRecord]:
    """The records of ``runs`` (in their order), with their labels and stages (each in its
    order) found by ``run``, the runs' ``id``."""
    labelled: dict[int, list[tuple[str, str]]] = {}
    for row in labels:
        labelled.setdefault(row["run"], []).append((row["name"], row["value"]))
    staged: dict[int, list[StageRecord]] = {}
    for row in stages:
        staged.setdefault(row["run"], []).append(_stage_of(row))
    return [_record_of(row, labelled.get(row["id"], []), staged.get(row["id"], [])) for row in runs]


def pin_of(row: Row) -> Pin:
    return Pin(row["name"], row["run_id"], row["started_at"] or None, row["pinned_s"])


def waiver_of(row: Row) -> Waiver:
    return Waiver(
        row["run_id"], row["started_at"] or None, row["reason"], row["accepted_by"], row["accepted_s"]
    )


def _stage_of(row: Row) -> StageRecord:
    values = {name: row[name] for name in _STAGE_FIELDS}
    return StageRecord(
        index=row["stage"],
        **{**values, "client_bound": bool(row["client_bound"]), "partial": bool(row["partial"])},
    )


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


def _record_of(row: Row, labels: list[tuple[str, str]], stages: list[StageRecord]) -> RunRecord:
    key = {name: row[name] for name in _KEY_FIELDS}
    return RunRecord(
        run_id=row["run_id"],
        started_at=row["started_at"] or None,
        started_s=row["started_s"],
        results_dir=row["results_dir"],
        key=ComparabilityKey(
            **{**key, "ignore_eos": _flag(key["ignore_eos"]), "stream": _flag(key["stream"])}
        ),
        server=ServerPrint(
            engine=row["engine"],
            version=row["engine_version"],
            models=tuple(orjson.loads(row["server_models"])),
            launch_args=orjson.loads(row["launch_args"]),
        ),
        client=ClientInfo(
            version=row["client_version"], host=row["client_host"], git_commit=row["git_commit"]
        ),
        labels=tuple(labels),
        exit_code=row["exit_code"],
        verdict=row["verdict"],
        verdict_line=row["verdict_line"],
        complete=bool(row["complete"]),
        single_stream_tok_per_s=row["single_stream_tok_per_s"],
        peak_tok_per_s=row["peak_tok_per_s"],
        peak_concurrency=row["peak_concurrency"],
        stages=tuple(stages),
    )
