"""The end of a run in the process that summarises it (single process or master): results
files, the exit decision, the run's record in the results store, the report, and the live
exporter's start."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence

from llmload.config.settings import RunConfig
from llmload.errors import HistoryError
from llmload.export import console
from llmload.export.prometheus import ExporterHandle, ExportSource, start_exporter
from llmload.export.report import write_report
from llmload.export.results import ResultsDir
from llmload.history.recording import record_run
from llmload.metrics.timeseries import TimeRow
from llmload.protocol.jsonvalue import JSON
from llmload.results.exitcodes import ExitCode
from llmload.results.summary import Summary, to_json
from llmload.results.verdict import judge


def write_data(results: ResultsDir, stats: Sequence[Mapping[str, JSON]], series: Sequence[TimeRow]) -> None:
    """The files beside the summary: each stage's histograms and the per-second series."""
    results.write_json("histograms.json", {"stages": stats})
    results.write_csv("timeseries.csv", series)


def write_summary(results: ResultsDir, summary: Summary) -> None:
    results.write_json("summary.json", to_json(summary))


def start_exporter_if(config: RunConfig, source: ExportSource) -> ExporterHandle | None:
    if not config.exporter.port:
        return None
    handle = start_exporter(config.exporter, source)
    print(
        f"llmload: Prometheus metrics on http://{config.exporter.host}:{handle.port}/metrics",
        file=sys.stderr,
        flush=True,
    )
    return handle


def conclude(
    config: RunConfig,
    results: ResultsDir,
    summary: Summary,
    *,
    exit_code_on_error: int = int(ExitCode.ERRORS_OVER_LIMIT),
) -> tuple[int, str]:
    """Judge the run, record the verdict in the summary, write the report; return the exit
    code and the table (printed at Locust's ``quit`` event, after Locust's own tables, so ours
    is what stays on screen, its verdict line last)."""
    verdict = judge(summary, config.checks)
    summary = summary.with_exit(verdict.to_exit())
    write_summary(results, summary)  # once, with its verdict
    record(config, results, summary)
    write_report(results.path)
    code = exit_code_on_error if verdict.code is ExitCode.ERRORS_OVER_LIMIT else int(verdict.code)
    return code, console.render(summary, str(results.path))


def record(config: RunConfig, results: ResultsDir, summary: Summary) -> None:
    """Record the finished run in the results store (docs/history.md). A store that cannot take
    it costs one line and nothing else: the run, its summary and its exit code stand."""
    try:
        record_run(config.history, summary, results.path, environ=os.environ, now_s=time.time())
    except HistoryError as exc:
        print(
            f"llmload: history: not recorded ({exc}); `llmload history reindex {results.path}` adds it later",
            file=sys.stderr,
            flush=True,
        )
