"""--history picks the store: a postgresql:// (or postgres://) URL a team's PostgreSQL store, any
other value a SQLite file; a URL's password is never shown; without the postgres extra a URL is
one line saying how to get it (docs/history.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from llmload.errors import HistoryError
from llmload.history.location import StoreURL, store_location, store_path
from llmload.history.open import open_store

SECRET = "s3cret"


@pytest.mark.parametrize(
    "given",
    [
        f"postgresql://team:{SECRET}@db.internal:5432/llmload",
        f"postgres://team:{SECRET}@db.internal/llmload",
        f"POSTGRESQL://team:{SECRET}@db.internal/llmload",
        f"postgresql://team@db.internal/llmload?sslmode=require&password={SECRET}",
    ],
)
def test_a_url_is_a_postgres_store_whose_password_is_never_shown(given: str) -> None:
    where = store_location(given, {})
    assert where == StoreURL(given) and where.url == given
    assert SECRET not in str(where) and SECRET not in repr(where) and SECRET not in f"{where}"
    assert "***" in str(where) and "team" in str(where) and "db.internal" in str(where)


def test_anything_else_is_a_sqlite_file(tmp_path: Path) -> None:
    assert store_location(str(tmp_path / "h.sqlite"), {}) == tmp_path / "h.sqlite"
    assert store_location("~/h.sqlite", {}) == Path.home() / "h.sqlite"
    assert store_location(None, {"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "llmload" / "history.sqlite"
    assert store_location("", {"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "llmload" / "history.sqlite"


def test_a_mistyped_url_is_refused_rather_than_made_a_folder() -> None:
    with pytest.raises(
        HistoryError, match=r"^postgresq://team:\*\*\*@db/x is no store: give a file's path"
    ) as e:
        store_location(f"postgresq://team:{SECRET}@db/x", {})
    assert SECRET not in str(e.value)


def test_a_sqlite_only_command_refuses_a_url_naming_it() -> None:
    with pytest.raises(
        HistoryError, match=r"^postgresql://team:\*\*\*@db/x: this command reads a SQLite store only"
    ):
        store_path(f"postgresql://team:{SECRET}@db/x", {})


def test_without_the_extra_a_url_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "llmload.history.postgres", raising=False)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    with pytest.raises(HistoryError) as e:
        open_store(StoreURL(f"postgresql://team:{SECRET}@db/x"))
    assert str(e.value) == (
        "postgresql://team:***@db/x: a PostgreSQL store needs the postgres extra: "
        "pip install 'llmload[postgres]'"
    )
