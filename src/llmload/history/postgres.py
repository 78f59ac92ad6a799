"""The results store on a PostgreSQL server, a team's: the SQLite store's records, methods and
failures, for writers on many machines at once (docs/history.md#a-shared-store-on-postgresql).

psycopg 3 (the ``postgres`` extra) speaks to the server. Every connection runs in autocommit,
and each write is one explicit transaction at READ COMMITTED, so a run is recorded whole or not
at all:

- creating or upgrading the tables takes a transaction-scoped advisory lock first and reads the
  version again under it (DDL is transactional in PostgreSQL), so two processes opening a new
  store create it once, and a half-made store is never seen;
- a run's writer takes an advisory lock on that run (its id and start) before it deletes the
  row it replaces: a second writer of the same run waits for the first to commit, then its
  DELETE (a statement of its own, with a fresh snapshot) sees and replaces that row. Writers
  of different runs lock different keys and touch different rows, so they never wait for
  each other;
- a read is one REPEATABLE READ transaction: the runs, their labels and their stages from one
  snapshot, never a run whose stages a writer replaced between two queries.

A lock held longer than ``BUSY_S`` (``lock_timeout``) and a server that cannot be reached within
``CONNECT_S`` are a ``HistoryError`` naming the store, password masked, like every other failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import psycopg
from psycopg import IsolationLevel
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.errors import LockNotAvailable
from psycopg.rows import dict_row

from llmload.core.redact import redact_text
from llmload.errors import HistoryError
from llmload.history import rows
from llmload.history.location import StoreURL
from llmload.history.rows import Pin, Waiver
from llmload.history.schema import POSTGRES, VERSION, migrations
from llmload.results.runrecord import RunRecord

BUSY_S = 5.0  # how long a writer waits for another's lock: a run's record is one short transaction
CONNECT_S = 10  # libpq's connect_timeout, unless the URL gives one
_DEFAULTS: dict[str, str | int] = {"connect_timeout": CONNECT_S, "application_name": "llmload"}
# The store's own advisory lock, for creating and upgrading its tables ("llmload" in ASCII). The
# runs' locks take two int4 keys, a space apart from this one bigint key.
_SCHEMA_LOCK = 0x6C6C6D6C6F6164
# The version: PostgreSQL has no PRAGMA user_version, so one row of a table of its own.
_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS llmload_version (version INTEGER NOT NULL)"
_PARAM = "%({})s"

Connection = psycopg.Connection[dict[str, Any]]


class PostgresStore:
    """One open store on a server; ``PostgresStore.open(url)`` as a context manager closes it."""

    def __init__(self, url: StoreURL, connection: Connection) -> None:
        self.url = url
        self._db = connection

    @classmethod
    def open(cls, url: StoreURL) -> PostgresStore:
        """Connect, and create the tables or bring them to this llmload's version."""
        with _failures(url):
            given = conninfo_to_dict(url.url)
            defaults = {k: v for k, v in _DEFAULTS.items() if k not in given}  # the URL's own win
            db = psycopg.connect(make_conninfo(url.url, **defaults), autocommit=True, row_factory=dict_row)
        store = cls(url, db)
        try:
            with _failures(url):
                db.execute("SELECT set_config('lock_timeout', %s, false)", (f"{round(BUSY_S * 1000)}ms",))
                store._migrate()
        except BaseException:
            db.close()
            raise
        return store

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._db.close()

    def _migrate(self) -> None:
        if self._version() == VERSION:  # the usual case: nothing to write, so a reader's role may read
            return
        with self._writing():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            found = self._version()  # again: another process may have done it while we waited
            for steps in migrations(POSTGRES)[found:]:
                for statement in steps:
                    self._db.execute(statement)
            self._db.execute(_VERSION_TABLE)
            self._db.execute("DELETE FROM llmload_version")
            self._db.execute("INSERT INTO llmload_version (version) VALUES (%s)", (VERSION,))

    def _version(self) -> int:
        """The store's version, 0 for a database without its tables; a newer one is refused."""
        table = self._db.execute("SELECT to_regclass('llmload_version') AS t").fetchone()
        if table is None or table["t"] is None:
            return 0
        row = self._db.execute("SELECT max(version) AS v FROM llmload_version").fetchone()
        found: int = 0 if row is None or row["v"] is None else row["v"]
        if found > VERSION:
            raise HistoryError(
                f"{self.url} is a version {found} results store, written by a newer llmload than "
                f"this one (which knows up to {VERSION}): upgrade llmload, or give another --history"
            )
        return found

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with _failures(self.url), self._db.transaction():
            yield

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        self._db.isolation_level = IsolationLevel.REPEATABLE_READ
        self._db.read_only = True
        try:
            with _failures(self.url), self._db.transaction():
                yield
        finally:
            self._db.isolation_level = None
            self._db.read_only = None

    def put(self, record: RunRecord, recorded_s: float) -> None:
        """Record a run; one recorded before (the same run id and start) is replaced."""
        run = rows.run_row(record, recorded_s)
        natural = (run["run_id"], run["started_at"])
        with self._writing():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", natural)
            self._db.execute("DELETE FROM runs WHERE run_id = %s AND started_at = %s", natural)
            inserted = self._db.execute(rows.insert("runs", run, _PARAM) + " RETURNING id", run).fetchone()
            assert inserted is not None  # an INSERT ... RETURNING's
            with self._db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO labels (run, name, value) VALUES (%s, %s, %s)",
                    rows.label_rows(record, inserted["id"]),
                )
                stages = rows.stage_rows(record, inserted["id"])
                if stages:
                    cursor.executemany(rows.insert("stages", stages[0], _PARAM), stages)

    def runs(self, key_prefix: str = "") -> list[RunRecord]:
        """The recorded runs whose key starts with ``key_prefix``, newest first."""
        with self._snapshot():
            found = self._db.execute(
                "SELECT * FROM runs WHERE starts_with(key, %s) "
                "ORDER BY coalesce(started_s, recorded_s) DESC, id DESC",
                (key_prefix,),
            ).fetchall()
            ids = [row["id"] for row in found]
            labels = self._db.execute(
                "SELECT run, name, value FROM labels WHERE run = ANY(%s) ORDER BY position", (ids,)
            ).fetchall()
            stages = self._db.execute(
                "SELECT * FROM stages WHERE run = ANY(%s) ORDER BY run, stage", (ids,)
            ).fetchall()
        return rows.records(found, labels, stages)

    def pin(self, name: str, record: RunRecord, pinned_s: float) -> None:
        """Name ``record`` as the baseline ``name``; a pin of that name before is moved."""
        with self._writing():
            self._db.execute(
                "INSERT INTO pins (name, run_id, started_at, pinned_s) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, "
                "started_at = excluded.started_at, pinned_s = excluded.pinned_s",
                (name, record.run_id, record.started_at or "", pinned_s),
            )

    def pins(self) -> list[Pin]:
        """Every named baseline, by name."""
        with self._snapshot():
            found = self._db.execute("SELECT * FROM pins ORDER BY name").fetchall()
        return [rows.pin_of(row) for row in found]

    def waive(self, waiver: Waiver) -> None:
        """Record that a person accepted a run's regression; a waiver of that run before is
        replaced."""
        with self._writing():
            self._db.execute(
                "INSERT INTO waivers (run_id, started_at, reason, accepted_by, accepted_s) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run_id, started_at) DO UPDATE SET "
                "reason = excluded.reason, accepted_by = excluded.accepted_by, "
                "accepted_s = excluded.accepted_s",
                (
                    waiver.run_id,
                    waiver.started_at or "",
                    waiver.reason,
                    waiver.accepted_by,
                    waiver.accepted_s,
                ),
            )

    def waivers(self) -> list[Waiver]:
        """Every accepted regression, oldest first."""
        with self._snapshot():
            found = self._db.execute("SELECT * FROM waivers ORDER BY accepted_s").fetchall()
        return [rows.waiver_of(row) for row in found]


@contextmanager
def _failures(url: StoreURL) -> Iterator[None]:
    """psycopg's and the server's errors as one line naming the store, its password masked."""
    try:
        yield
    except LockNotAvailable:
        raise HistoryError(f"{url}: still locked by another writer after {BUSY_S:g} s") from None
    except psycopg.Error as exc:
        said = " ".join(str(exc).split())  # libpq's messages run over lines
        raise HistoryError(f"{url}: {redact_text(said)}") from None
