"""A run's results directory: per-request records as they happen, JSON documents at the end.

Layout (one directory per run under ``--results-dir``)::

    <run_id>/summary.json        the product contract (schema in export/summary.py)
    <run_id>/histograms.json     merged per-stage histograms, so any quantile can be recomputed
    <run_id>/requests.jsonl      one line per request, warm-up included, written as it finishes
"""

from __future__ import annotations

import csv
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import orjson

from llmload.core.record import RequestRecord
from llmload.errors import ResultsError
from llmload.protocol.jsonvalue import JSON


def new_run_id(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{secrets.token_hex(2)}"


class ResultsDir:
    def __init__(self, root: str, run_id: str) -> None:
        self.path = Path(root) / run_id
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create results directory {self.path}: {exc}") from None

    def write_json(self, name: str, document: JSON) -> Path:
        """Write atomically, so a reader never sees half a summary."""
        target = self.path / name
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        os.replace(tmp, target)
        return target

    def write_csv(self, name: str, rows: Sequence[Mapping[str, object]]) -> Path:
        """Write ``rows``; with none, remove the file instead: an empty file would look like
        results and read back as a broken one."""
        target = self.path / name
        if not rows:
            target.unlink(missing_ok=True)
            return target
        tmp = target.with_suffix(target.suffix + ".tmp")
        with tmp.open("w", newline="") as f:
            if rows:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        os.replace(tmp, target)
        return target

    def open_records(self, name: str = "requests.jsonl", *, keep_empty: bool = False) -> RecordLog:
        return RecordLog(self.path / name, keep_empty=keep_empty)


class RecordLog:
    """Appends one JSON line per finished request and flushes it, so a killed run keeps them."""

    def __init__(self, path: Path, *, keep_empty: bool = False) -> None:
        self.path = path
        self.count = 0
        # A worker's log is listed in the master's summary, so readers open it even when that
        # worker sent nothing; a single process's empty log is only noise beside its verdict.
        self._keep_empty = keep_empty
        self._file: IO[bytes] = path.open("ab")

    def write(self, record: RequestRecord) -> None:
        self._file.write(orjson.dumps(record.to_json()) + b"\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        self._file.close()
        if not self._keep_empty and self.count == 0 and self.path.stat().st_size == 0:
            self.path.unlink()  # no request finished: no empty file that looks like a log


def read_records(path: Path) -> list[dict[str, JSON]]:
    """Read a ``requests.jsonl`` back (for reports and tests)."""
    with path.open("rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]
