"""`llmload history`: the runs recorded in the results store (docs/history.md).

  llmload history                                  every run, grouped by comparability key
  llmload history KEY [--metric NAME] [--level N]  one key's trend: a row per run
  llmload history KEY --html PATH                  the trend as a page, a chart per level
  llmload history reindex DIR... [--label K=V]     record results directories (again)
  llmload history pin RUN --as NAME                name RUN as a baseline for llmload gate

KEY is the start of a key's hash, as the table shows it. Every run records itself when it ends
(unless --no-history); reindex rebuilds the store from what the runs wrote, and recording a run
again replaces it. --history PATH (or LLMLOAD_HISTORY) names the store, for these commands as
for a run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from llmload.cli.store import store_option
from llmload.config import values
from llmload.config.commands import declare
from llmload.errors import ConfigError, HistoryError, ResultsError
from llmload.export.history_page import history_page, page_metrics
from llmload.export.history_render import levels_of, runs_table, trend_table
from llmload.export.rundata import SUMMARY, read_summary
from llmload.history.location import Location, store_location
from llmload.history.open import open_store
from llmload.results.runrecord import METRICS, RUN_METRICS, RunRecord, record_of


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload history", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("key", nargs="?", metavar="KEY", help="a key's hash, or its start: that key's trend")
    declare(p, "--metric", "--level", "--html")
    store_option(p)
    return p


def _reindex_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload history reindex",
        description="Record results directories in the store: each DIR a run's, or a folder of them "
        "(searched at any depth). A run recorded before is replaced, so it can be run again.",
    )
    p.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="a results directory, or a folder of them"
    )
    declare(p, "--label")
    store_option(p)
    return p


def main(argv: Sequence[str]) -> int:
    if list(argv[:1]) == ["reindex"]:
        return reindex(argv[1:])
    if list(argv[:1]) == ["pin"]:
        from llmload.cli.gate import pin  # the gate's baselines: named where they are used

        return pin(argv[1:])
    args = _parser().parse_args(list(argv))
    path = store_location(args.history, os.environ)
    records = _read(path, args.key or "")
    if args.key is None and args.metric is None and args.level is None and args.html is None:
        print(runs_table(records, str(path)))
        return 0
    if args.metric is not None and args.metric not in (*METRICS, *RUN_METRICS):
        raise ConfigError("--metric", args.metric, f"give one of {', '.join((*METRICS, *RUN_METRICS))}")
    records = _one_key(records, args.key, path)
    level = _level(args.level, args.metric, records)
    print(trend_table(records, args.metric or "output_tok_per_s", level))
    if args.html is not None:
        _write(args.html, history_page(records, page_metrics(args.metric), level))
        print(f"llmload history: the trend page is {args.html}")
    return 0


def _write(path: Path, page: str) -> None:
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc}") from None


def _read(path: Location, key_prefix: str) -> list[RunRecord]:
    if isinstance(path, Path) and not path.is_file():  # reading never creates a SQLite store
        if path.exists():
            raise HistoryError(f"{path} is not a file: give --history the store's path")
        return []
    with open_store(path) as store:
        return store.runs(key_prefix)


def _one_key(records: Sequence[RunRecord], key: str | None, path: Location) -> list[RunRecord]:
    keys = sorted({r.key.hash for r in records})
    if len(keys) == 1:
        return list(records)
    if not keys:
        said = f"no key starts with {key!r}" if key else "no runs"
        raise ConfigError("KEY", key, f"{said} in {path}: `llmload history` lists the keys")
    raise ConfigError(
        "KEY",
        key,
        f"{len(keys)} keys match ({', '.join(keys[:5])}{', ...' if len(keys) > 5 else ''}): name one",
    )


def _level(given: str | None, metric: str, records: Sequence[RunRecord]) -> str | None:
    """``--level`` as the key's runs recorded it (``2.50/s`` is ``2.5/s``); None: every level."""
    if given is None:
        return None
    if metric in RUN_METRICS:
        raise ConfigError("--level", given, f"{metric} is the run's, at no level: leave --level out")
    level = given.strip()
    if level.endswith("/s"):
        with contextlib.suppress(ValueError):  # 2.50/s is the 2.5/s recorded
            level = f"{float(level.removesuffix('/s')):g}/s"
    measured = levels_of(records)
    if level not in measured:
        raise ConfigError("--level", given, f"the key's runs measured levels {', '.join(measured) or 'none'}")
    return level


def _run_dirs(given: Path) -> list[Path]:
    if not given.is_dir():
        raise ResultsError(f"{given} is not a directory: give results directories, or folders of them")
    if (given / SUMMARY).is_file():
        return [given]
    found = sorted(p.parent for p in given.rglob(SUMMARY))
    if not found:
        raise ResultsError(f"{given} holds no {SUMMARY}: give results directories, or folders of them")
    return found


def reindex(argv: Sequence[str]) -> int:
    args = _reindex_parser().parse_args(list(argv))
    labels = dict(values.labels(args.label, args))
    runs = [run for given in args.dirs for run in _run_dirs(given)]
    path = store_location(args.history, os.environ)
    recorded, skipped = 0, 0
    with open_store(path) as store:
        for run_dir in runs:
            try:
                summary = read_summary(run_dir)
            except ResultsError as exc:
                print(f"llmload history: skipped: {exc}", file=sys.stderr)
                skipped += 1
                continue
            store.put(record_of(summary, str(run_dir.resolve()), labels), time.time())
            recorded += 1
    print(
        f"llmload history: {recorded} run(s) recorded in {path}" + (f", {skipped} skipped" if skipped else "")
    )
    return 0 if not skipped else ResultsError.exit_code
