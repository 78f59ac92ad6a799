"""A run records itself in the results store when it ends (``run/finish.py``).

Only the process that writes the final ``summary.json`` records (a local run, or a distributed
run's master), once per run, after the summary is on disk: the record is read from the summary
the run wrote, the same as ``llmload history reindex`` reads it later.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from llmload.config.settings import HistoryConfig
from llmload.history.location import Location, store_location
from llmload.history.open import open_store
from llmload.results.runrecord import record_of
from llmload.results.summary import Summary


def record_run(
    config: HistoryConfig, summary: Summary, results_dir: Path, *, environ: Mapping[str, str], now_s: float
) -> Location | None:
    """Record the run unless ``--no-history``; the store it went to. A store that cannot be
    opened or written raises ``HistoryError``, naming it."""
    if not config.enabled:
        return None
    location = store_location(config.path, environ)
    record = record_of(summary, str(results_dir.resolve()))
    with open_store(location) as store:
        store.put(record, now_s)
    return location
