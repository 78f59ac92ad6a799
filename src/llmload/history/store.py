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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from types import TracebackType

import orjson

from llmload.errors import HistoryError
from llmload.history.schema import MIGRATIONS, VERSION
from llmload.results.comparable import ComparabilityKey
from llmload.results.runrecord import ClientInfo, RunRecord, ServerPrint, StageRecord

BUSY_S = 5.0  # how long a writer waits for another: a run's record is one short transaction
_KEY_FIELDS = tuple(f.name for f in fields(ComparabilityKey))
_STAGE_FIELDS = tuple(f.name for f in fields(StageRecord) if f.name != "index")


class Store:
    """One open store; ``Store.open(path)`` as a context manager closes it."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (or create) the store at ``path`` and bring it to this llmload's version."""
        with _failures(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None)
        store = cls(path, db)
        try:
            with _failures(path):
                db.row_factory = sqlite3.Row
                db.execute("PRAGMA foreign_keys = ON")
                if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    db.execute("PRAGMA journal_mode = WAL")  # persistent: once per file
                store._migrate()
        except BaseException:
            db.close()
            raise
        return store

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._db.close()

    def _migrate(self) -> None:
        found = self._version()
        if found > VERSION:
            raise HistoryError(
                f"{self.path} is a version {found} results store, written by a newer llmload than "
                f"this one (which knows up to {VERSION}): upgrade llmload, or give another --history"
            )
        if found == VERSION:
            return
        with self._writing():
            for steps in MIGRATIONS[self._version() :]:  # again: another process may have done it
                for statement in steps:
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {VERSION}")

    def _version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with _failures(self.path):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def put(self, record: RunRecord, recorded_s: float) -> None:
        """Record a run; one recorded before (the same run id and start) is replaced."""
        run = _run_row(record, recorded_s)
        with self._writing():
            self._db.execute(
                "DELETE FROM runs WHERE run_id = ? AND started_at = ?", (run["run_id"], run["started_at"])
            )
            rowid = self._db.execute(_insert("runs", run), run).lastrowid
            self._db.executemany(
                "INSERT INTO labels (run, name, value) VALUES (?, ?, ?)",
                [(rowid, name, value) for name, value in record.labels],
            )
            rows = [{"run": rowid, **_stage_row(stage)} for stage in record.stages]
            if rows:
                self._db.executemany(_insert("stages", rows[0]), rows)

    def runs(self, key_prefix: str = "") -> list[RunRecord]:
        """The recorded runs whose key starts with ``key_prefix``, newest first."""
        with _failures(self.path):
            found = self._db.execute(
                "SELECT * FROM runs WHERE substr(key, 1, length(:prefix)) = :prefix "
                "ORDER BY coalesce(started_s, recorded_s) DESC, id DESC",
                {"prefix": key_prefix},
            ).fetchall()
            labels: dict[int, list[tuple[str, str]]] = {}
            for row in self._db.execute("SELECT run, name, value FROM labels ORDER BY rowid"):
                labels.setdefault(row["run"], []).append((row["name"], row["value"]))
            stages: dict[int, list[StageRecord]] = {}
            for row in self._db.execute("SELECT * FROM stages ORDER BY run, stage"):
                stages.setdefault(row["run"], []).append(_stage_of(row))
        return [_record_of(row, labels.get(row["id"], []), stages.get(row["id"], [])) for row in found]

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
            rows = self._db.execute("SELECT * FROM pins ORDER BY name").fetchall()
        return [Pin(r["name"], r["run_id"], r["started_at"] or None, r["pinned_s"]) for r in rows]

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
            rows = self._db.execute("SELECT * FROM waivers ORDER BY accepted_s").fetchall()
        return [
            Waiver(r["run_id"], r["started_at"] or None, r["reason"], r["accepted_by"], r["accepted_s"])
            for r in rows
        ]


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


@contextmanager
def _failures(path: Path) -> Iterator[None]:
    """SQLite's and the file system's errors as one line naming the store."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        said = str(exc)
        if "locked" in said or "busy" in said:
            said = f"still locked by another writer after {BUSY_S:g} s"
        raise HistoryError(f"{path}: {said}") from None
    except (sqlite3.Error, OSError) as exc:
        raise HistoryError(f"{path}: {exc}") from None


def _insert(table: str, row: Mapping[str, object]) -> str:
    return f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join(':' + c for c in row)})"


def _run_row(record: RunRecord, recorded_s: float) -> dict[str, object]:
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


def _stage_row(stage: StageRecord) -> dict[str, object]:
    return {
        "stage": stage.index,
        "level": stage.level,
        **{name: getattr(stage, name) for name in _STAGE_FIELDS},
    }


def _stage_of(row: sqlite3.Row) -> StageRecord:
    values = {name: row[name] for name in _STAGE_FIELDS}
    return StageRecord(
        index=row["stage"],
        **{**values, "client_bound": bool(row["client_bound"]), "partial": bool(row["partial"])},
    )


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


def _record_of(
    row: sqlite3.Row, labels: Sequence[tuple[str, str]], stages: Sequence[StageRecord]
) -> RunRecord:
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
