"""The results store as the commands over it take it: one ``--history`` option, and the store
opened for reading, never created by a command that only reads (docs/history.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from llmload.config.commands import declare
from llmload.config.options import BY_FLAG
from llmload.errors import HistoryError
from llmload.history.location import store_location
from llmload.history.open import HistoryStore, open_store

_HISTORY = BY_FLAG["--history"]


def store_option(p: argparse.ArgumentParser) -> None:
    """``--history``, as a run takes it: ``$LLMLOAD_HISTORY`` where it is set."""
    declare(p, "--history", defaults={"--history": os.environ.get(_HISTORY.env)})


def open_existing(given: str | None) -> HistoryStore:
    """The store ``--history`` names; a SQLite file that is not there is said, not made."""
    location = store_location(given, os.environ)
    if isinstance(location, Path) and not location.is_file():
        raise HistoryError(f"{location}: no results store there: runs record themselves when they end")
    return open_store(location)
