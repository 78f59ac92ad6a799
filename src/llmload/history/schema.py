"""What the results store holds, version by version (docs/history.md#the-store).

The version is SQLite's ``PRAGMA user_version``: 0 is an empty file, and ``MIGRATIONS[n]`` takes
a store from version ``n`` to ``n + 1``. A store is brought up to date when it is opened, inside
one write transaction that checks the version again, so two processes opening a new store at
once create it once. A store of a newer version than this llmload knows is refused rather than
written in a shape it does not understand.

``pins`` names a baseline run (``llmload history pin RUN --as main``) and ``waivers`` keeps the
regressions a person accepted (``llmload gate accept``), each by the run's id and start.

One row of ``runs`` per run (a run id at one start time: recording the same run again replaces
it, a later run under the same ``--run-id`` is a run of its own), its labels in ``labels``, and
one row of ``stages`` per stage, repeats apart. Metric columns carry their stages.csv names.
"""

from __future__ import annotations

from llmload.results.runrecord import METRICS

_METRIC_COLUMNS = ",\n    ".join(f"{name} REAL" for name in METRICS)

_V1: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,  -- as summary.json has it; '' when the run never started
    started_s REAL,            -- the same as Unix time: what orders a trend
    recorded_s REAL NOT NULL,
    results_dir TEXT NOT NULL,
    key TEXT NOT NULL,         -- the comparability key's hash; its fields follow
    scenario TEXT,
    prompt_tokens TEXT,
    output_tokens TEXT,
    ignore_eos INTEGER,
    api TEXT,
    stream INTEGER,
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
    complete INTEGER NOT NULL,
    single_stream_tok_per_s REAL,
    peak_tok_per_s REAL,
    peak_concurrency INTEGER,
    UNIQUE (run_id, started_at)
)""",
    "CREATE INDEX IF NOT EXISTS runs_by_key ON runs (key, started_s)",
    """CREATE TABLE IF NOT EXISTS labels (
    run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run, name)
)""",
    f"""CREATE TABLE IF NOT EXISTS stages (
    run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    stage INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    level TEXT NOT NULL,  -- '32' (users) or '2.5/s' (requests per second), as --level names it
    concurrency INTEGER,
    rate_req_per_s REAL,
    {_METRIC_COLUMNS},
    requests_ok INTEGER NOT NULL,
    requests_failed INTEGER NOT NULL,
    client_bound INTEGER NOT NULL,
    partial INTEGER NOT NULL,
    PRIMARY KEY (run, stage)
)""",
)

# Version 2: a named baseline pinned to a run, and a regression accepted by a waiver. Both name
# their run by its natural key (run id and start), not by its row: reindexing a run replaces its
# row, and must keep the pins and waivers that point at it.
_V2: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS pins (
    name TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    pinned_s REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS waivers (
    run_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    accepted_by TEXT,
    accepted_s REAL NOT NULL,
    PRIMARY KEY (run_id, started_at)
)""",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2)
VERSION = len(MIGRATIONS)
