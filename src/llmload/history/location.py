"""Where the results store is: ``--history`` (or ``LLMLOAD_HISTORY``), else ``history.sqlite``
in llmload's folder of the user's data directory (the XDG base directory specification's
``$XDG_DATA_HOME``, ``~/.local/share`` when it is unset).

A ``postgresql://`` (or ``postgres://``) URL is a store on a PostgreSQL server, a team's
(``postgres.py``); any other value is a SQLite file's path. A URL's password is never shown:
``str()`` of a ``StoreURL`` masks it, and every message names a store by ``str()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from llmload.core.redact import redact_text, redact_url
from llmload.errors import HistoryError

FILE = "history.sqlite"
SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True, slots=True)
class StoreURL:
    """A store on a PostgreSQL server, by its libpq connection URL (which may hold a password)."""

    url: str

    def __str__(self) -> str:  # a password in the user part or in the query (?password=...) masked
        return redact_text(redact_url(self.url))

    def __repr__(self) -> str:
        return f"StoreURL({str(self)!r})"


Location = Path | StoreURL


def default_path(environ: Mapping[str, str]) -> Path:
    root = Path(environ.get("XDG_DATA_HOME", ""))
    # the specification ignores a relative XDG_DATA_HOME: it would move with the working directory
    if root.is_absolute():
        return root / "llmload" / FILE
    try:
        return Path.home() / ".local" / "share" / "llmload" / FILE
    except (RuntimeError, KeyError):  # no HOME and no password entry (a bare container)
        raise HistoryError("no home directory for the results store: give --history PATH") from None


def store_location(given: str | None, environ: Mapping[str, str]) -> Location:
    """The store a run or a command uses: the one given, else the default."""
    if not given:
        return default_path(environ)
    if given.lower().startswith(SCHEMES):
        return StoreURL(given)
    if "://" in given:  # a mistyped URL would otherwise make a folder named after its scheme
        shown = redact_text(redact_url(given))
        raise HistoryError(f"{shown} is no store: give a file's path or a postgresql:// URL")
    return Path(given).expanduser()


def store_path(given: str | None, environ: Mapping[str, str]) -> Path:
    """A SQLite store's path, for a command that reads SQLite alone (``open.open_store`` opens
    either store); a URL is refused, naming it."""
    location = store_location(given, environ)
    if isinstance(location, StoreURL):
        raise HistoryError(
            f"{location}: this command reads a SQLite store only: give --history a file's path"
        )
    return location
