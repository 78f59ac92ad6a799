"""Where the results store is: ``--history PATH`` (or ``LLMLOAD_HISTORY``), else
``history.sqlite`` in llmload's folder of the user's data directory (the XDG base directory
specification's ``$XDG_DATA_HOME``, ``~/.local/share`` when it is unset)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from llmload.errors import HistoryError

FILE = "history.sqlite"


def default_path(environ: Mapping[str, str]) -> Path:
    root = Path(environ.get("XDG_DATA_HOME", ""))
    # the specification ignores a relative XDG_DATA_HOME: it would move with the working directory
    if root.is_absolute():
        return root / "llmload" / FILE
    try:
        return Path.home() / ".local" / "share" / "llmload" / FILE
    except (RuntimeError, KeyError):  # no HOME and no password entry (a bare container)
        raise HistoryError("no home directory for the results store: give --history PATH") from None


def store_path(given: str | None, environ: Mapping[str, str]) -> Path:
    """The store a run or a command uses: the one given, else the default."""
    return Path(given).expanduser() if given else default_path(environ)
