"""The results store on SQLite: records in, records out, nothing else (docs/history.md).

Several runs end at once (a ``tune`` matrix, CI jobs on one machine, the suite's workers), so
the store is written the way SQLite is safe for parallel writers: write-ahead logging (readers
never wait for a writer, and a writer waits only for another writer), a busy timeout instead of
an immediate "database is locked", and one short ``BEGIN IMMEDIATE`` transaction per run, which
takes the write lock before it reads, so two writers cannot both read and then collide. Every
failure of the file or of SQLite is a ``HistoryError`` naming the store's path.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from llmload.errors import HistoryError
from llmload.history import rows
from llmload.history.rows import Pin, Waiver
from llmload.history.schema import MIGRATIONS, VERSION
from llmload.results.runrecord import RunRecord

__all__ = ["BUSY_S", "Pin", "Store", "Waiver"]

BUSY_S = 5.0  # how long a writer waits for another: a run's record is one short transaction


class Store:
    """One open store; ``Store.open(path)`` as a context manager closes it."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (or create) the store at ``path`` and bring it to this llmload's version.

        Two processes creating one store at once can find it busy where SQLite's own wait does
        not apply (switching a new file to WAL needs it alone; in CI a second writer's open
        failed so): the whole open is tried again until ``BUSY_S`` has passed."""
        with _failures(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            deadline = time.monotonic() + BUSY_S
            while True:
                db = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None)
                store = cls(path, db)
                try:
                    store._prepare()
                    return store
                except sqlite3.OperationalError as exc:
                    db.close()
                    if not _busy(exc) or time.monotonic() > deadline:
                        raise
                except BaseException:
                    db.close()
                    raise
                time.sleep(0.05)

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._db.close()

    def _prepare(self) -> None:
        """WAL once per file, and the schema brought to this llmload's version; SQLite's errors
        left as they are, for ``open`` to try again on a busy one."""
        db = self._db
        db.execute("PRAGMA foreign_keys = ON")
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode = WAL")  # persistent: once per file
        found = self._version()
        if found > VERSION:
            raise HistoryError(
                f"{self.path} is a version {found} results store, written by a newer llmload than "
                f"this one (which knows up to {VERSION}): upgrade llmload, or give another --history"
            )
        if found == VERSION:
            return
        with _transaction(db):
            for steps in MIGRATIONS[self._version() :]:  # again: another process may have done it
                for statement in steps:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {VERSION}")

    def _version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with _failures(self.path), _transaction(self._db):
            yield

    def put(self, record: RunRecord, recorded_s: float) -> None:
        """Record a run; one recorded before (the same run id and start) is replaced."""
        run = rows.run_row(record, recorded_s)
        with self._writing():
            self._db.execute(
                "DELETE FROM runs WHERE run_id = ? AND started_at = ?", (run["run_id"], run["started_at"])
            )
            rowid = self._db.execute(rows.insert("runs", run, ":{}"), run).lastrowid
            assert rowid is not None  # an INSERT's
            self._db.executemany(
                "INSERT INTO labels (run, name, value) VALUES (?, ?, ?)", rows.label_rows(record, rowid)
            )
            stages = rows.stage_rows(record, rowid)
            if stages:
                self._db.executemany(rows.insert("stages", stages[0], ":{}"), stages)

    def runs(self, key_prefix: str = "") -> list[RunRecord]:
        """The recorded runs whose key starts with ``key_prefix``, newest first."""
        with _failures(self.path):
            # one read transaction: the three reads see one snapshot (write-ahead logging keeps
            # it for a reader), never a run a writer is replacing without its stages
            self._db.execute("BEGIN")
            try:
                found = self._select(
                    "SELECT * FROM runs WHERE substr(key, 1, length(:prefix)) = :prefix "
                    "ORDER BY coalesce(started_s, recorded_s) DESC, id DESC",
                    {"prefix": key_prefix},
                )
                labels = self._select("SELECT run, name, value FROM labels ORDER BY rowid")
                stages = self._select("SELECT * FROM stages ORDER BY run, stage")
            finally:
                self._db.execute("COMMIT")
        return rows.records(found, labels, stages)

    def _select(self, sql: str, params: Mapping[str, object] | None = None) -> list[rows.Row]:
        cursor = self._db.cursor()
        cursor.row_factory = _dict_row  # rows by column name, as rows.records reads them
        found: list[rows.Row] = cursor.execute(sql, params or {}).fetchall()
        return found

    def pin(self, name: str, record: RunRecord, pinned_s: float) -> None:
        """Name ``record`` as the baseline ``name``; a pin of that name before is moved."""
        with self._writing():
            self._db.execute(
                "INSERT INTO pins (name, run_id, started_at, pinned_s) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, "
                "started_at = excluded.started_at, pinned_s = excluded.pinned_s",
                (name, record.run_id, record.started_at or "", pinned_s),
            )

    def pins(self) -> list[Pin]:
        """Every named baseline, by name."""
        with _failures(self.path):
            found = self._select("SELECT * FROM pins ORDER BY name")
        return [rows.pin_of(row) for row in found]

    def waive(self, waiver: Waiver) -> None:
        """Record that a person accepted a run's regression; a waiver of that run before is
        replaced."""
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO waivers (run_id, started_at, reason, accepted_by, accepted_s) "
                "VALUES (?, ?, ?, ?, ?)",
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
        with _failures(self.path):
            found = self._select("SELECT * FROM waivers ORDER BY accepted_s")
        return [rows.waiver_of(row) for row in found]


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE``: the write lock taken before the first read, so two writers never
    both read and then collide."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _busy(exc: sqlite3.OperationalError) -> bool:
    said = str(exc)
    return "locked" in said or "busy" in said


@contextmanager
def _failures(path: Path) -> Iterator[None]:
    """SQLite's and the file system's errors as one line naming the store."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        said = f"still locked by another writer after {BUSY_S:g} s" if _busy(exc) else str(exc)
        raise HistoryError(f"{path}: {said}") from None
    except (sqlite3.Error, OSError) as exc:
        raise HistoryError(f"{path}: {exc}") from None


def _dict_row(cursor: sqlite3.Cursor, row: tuple[object, ...]) -> dict[str, object]:
    return dict(zip((column[0] for column in cursor.description), row, strict=True))
