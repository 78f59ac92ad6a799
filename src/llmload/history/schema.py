"""What the results store holds, version by version (docs/history.md#the-store), on SQLite and
on PostgreSQL alike.

The tables are written once, below; the few words the two databases spell differently are a
``Dialect``'s, each with why. ``migrations(dialect)[n]`` takes a store from version ``n`` to
``n + 1``. The version is SQLite's ``PRAGMA user_version`` (``store.py``) or PostgreSQL's one-row
``llmload_version`` table (``postgres.py``): 0 is an empty store. A store is brought up to date
when it is opened, inside one write transaction that checks the version again (under an advisory
lock on PostgreSQL), so two processes opening a new store at once create it once. A store of a
newer version than this llmload knows is refused rather than written in a shape it does not
understand.

``pins`` names a baseline run (``llmload history pin RUN --as main``) and ``waivers`` keeps the
regressions a person accepted (``llmload gate accept``), each by the run's id and start.

One row of ``runs`` per run (a run id at one start time: recording the same run again replaces
it, a later run under the same ``--run-id`` is a run of its own), its labels in ``labels``, and
one row of ``stages`` per stage, repeats apart. Metric columns carry their stages.csv names.
JSON (the server's models and launch arguments) is text in both: the same bytes come back.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.results.runrecord import METRICS


@dataclass(frozen=True, slots=True)
class Dialect:
    """The words the tables below are written in where SQLite and PostgreSQL differ."""

    row_id: str  # a run's row number, given by the database when the row is inserted
    real: str  # a float: SQLite's REAL is 8 bytes, PostgreSQL's REAL only 4 (its 8 is DOUBLE PRECISION)
    flag: str  # yes or no: SQLite has no boolean type (0 and 1); PostgreSQL's BOOLEAN reads as one in SQL
    label_order: str  # a run's labels in the order given: SQLite's rowid keeps it; PostgreSQL has none


SQLITE = Dialect(row_id="INTEGER PRIMARY KEY", real="REAL", flag="INTEGER", label_order="")
POSTGRES = Dialect(
    row_id="INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    real="DOUBLE PRECISION",
    flag="BOOLEAN",
    label_order="\n    position BIGINT GENERATED ALWAYS AS IDENTITY,",
)


def _v1(d: Dialect) -> tuple[str, ...]:
    metric_columns = ",\n    ".join(f"{name} {d.real}" for name in METRICS)
    return (
        f"""CREATE TABLE IF NOT EXISTS runs (
    id {d.row_id},
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,  -- as summary.json has it; '' when the run never started
    started_s {d.real},            -- the same as Unix time: what orders a trend
    recorded_s {d.real} NOT NULL,
    results_dir TEXT NOT NULL,
    key TEXT NOT NULL,         -- the comparability key's hash; its fields follow
    scenario TEXT,
    prompt_tokens TEXT,
    output_tokens TEXT,
    ignore_eos {d.flag},
    api TEXT,
    stream {d.flag},
    model TEXT,
    hardware TEXT,
    engine TEXT,
    engine_version TEXT,
    server_models TEXT NOT NULL,  -- JSON array
    launch_args TEXT NOT NULL,    -- JSON, as the fingerprint found them (null: none)
    client_version TEXT,
    client_host TEXT,
    git_commit TEXT,
    exit_code INTEGER,
    verdict TEXT,
    verdict_line TEXT,
    complete {d.flag} NOT NULL,
    single_stream_tok_per_s {d.real},
    peak_tok_per_s {d.real},
    peak_concurrency INTEGER,
    UNIQUE (run_id, started_at)
)""",
        "CREATE INDEX IF NOT EXISTS runs_by_key ON runs (key, started_s)",
        f"""CREATE TABLE IF NOT EXISTS labels (
    run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,{d.label_order}
    PRIMARY KEY (run, name)
)""",
        f"""CREATE TABLE IF NOT EXISTS stages (
    run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    stage INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    level TEXT NOT NULL,  -- '32' (users) or '2.5/s' (requests per second), as --level names it
    concurrency INTEGER,
    rate_req_per_s {d.real},
    {metric_columns},
    requests_ok INTEGER NOT NULL,
    requests_failed INTEGER NOT NULL,
    client_bound {d.flag} NOT NULL,
    partial {d.flag} NOT NULL,
    PRIMARY KEY (run, stage)
)""",
    )


# Version 2: a named baseline pinned to a run, and a regression accepted by a waiver. Both name
# their run by its natural key (run id and start), not by its row: reindexing a run replaces its
# row, and must keep the pins and waivers that point at it.
def _v2(d: Dialect) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE IF NOT EXISTS pins (
    name TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    pinned_s {d.real} NOT NULL
)""",
        f"""CREATE TABLE IF NOT EXISTS waivers (
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    accepted_by TEXT,
    accepted_s {d.real} NOT NULL,
    PRIMARY KEY (run_id, started_at)
)""",
    )


def migrations(dialect: Dialect) -> tuple[tuple[str, ...], ...]:
    """Every version's statements, in order, in ``dialect``'s words."""
    return (_v1(dialect), _v2(dialect))


MIGRATIONS = migrations(SQLITE)
VERSION = len(MIGRATIONS)
