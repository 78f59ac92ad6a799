"""The results store's tests run on both stores: a SQLite file, and a database of a real
PostgreSQL server started for the module (tests/support/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import PostgresServers


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServers]:
    """The module's PostgreSQL server, started by the first test that takes a database."""
    servers = PostgresServers()
    yield servers
    servers.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path, postgres: PostgresServers) -> str:
    """A new, empty store, as ``--history`` names it: a SQLite file's path (in a folder not made
    yet), or a PostgreSQL database's URL with a password."""
    if request.param == "sqlite":
        return str(tmp_path / "store" / "history.sqlite")
    return postgres.server().database()
