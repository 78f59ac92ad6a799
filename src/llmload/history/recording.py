"""A run records itself in the results store when it ends (``run/finish.py``).

Only the process that writes the final ``summary.json`` records (a local run, or a distributed
run's master), once per run, after the summary is on disk: the record is read from the summary
the run wrote, the same as ``llmload history reindex`` reads it later.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from llmload.config.settings import HistoryConfig
from llmload.history.location import store_path
from llmload.history.store import Store
from llmload.results.runrecord import record_of
from llmload.results.summary import Summary


def record_run(
    config: HistoryConfig, summary: Summary, results_dir: Path, *, environ: Mapping[str, str], now_s: float
) -> Path | None:
    """Record the run unless ``--no-history``; the store it went to. A store that cannot be
    opened or written raises ``HistoryError``, naming it."""
    if not config.enabled:
        return None
    path = store_path(config.path, environ)
    record = record_of(summary, str(results_dir.resolve()))
    with Store.open(path) as store:
        store.put(record, now_s)
    return path
