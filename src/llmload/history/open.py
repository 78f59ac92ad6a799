"""The one way to open the results store from a ``--history`` value's location: a SQLite file
(``store.py``, the standard library) or a PostgreSQL server (``postgres.py``, behind the
``postgres`` extra). Both take and give the same records (``rows.py``)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Protocol

from llmload.errors import HistoryError
from llmload.history.location import Location
from llmload.history.rows import Pin, Waiver
from llmload.history.store import Store
from llmload.results.runrecord import RunRecord

EXTRA = "pip install 'llmload[postgres]'"


class HistoryStore(Protocol):
    """What either store does; ``open_store(...)`` as a context manager closes it."""

    def __enter__(self) -> HistoryStore: ...

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def put(self, record: RunRecord, recorded_s: float) -> None: ...

    def runs(self, key_prefix: str = "") -> list[RunRecord]: ...

    def pin(self, name: str, record: RunRecord, pinned_s: float) -> None: ...

    def pins(self) -> list[Pin]: ...

    def waive(self, waiver: Waiver) -> None: ...

    def waivers(self) -> list[Waiver]: ...


def open_store(location: Location) -> HistoryStore:
    """Open (or create) the store and bring it to this llmload's version; ``HistoryError``
    naming it (its password masked) when it cannot be."""
    if isinstance(location, Path):
        return Store.open(location)
    try:
        from llmload.history.postgres import PostgresStore
    except ImportError as exc:  # psycopg not installed, or without a libpq to load
        if exc.name is not None and not exc.name.startswith("psycopg"):
            raise
        raise HistoryError(f"{location}: a PostgreSQL store needs the postgres extra: {EXTRA}") from None
    return PostgresStore.open(location)
