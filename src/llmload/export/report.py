"""``llmload report RUN_DIR``: a run's ``stages.csv`` and self-contained, interactive ``report.html``.

Everything is rebuilt from the stored files (``summary.json``, and ``histograms.json``,
``timeseries.csv`` and ``requests*.jsonl`` when the run wrote them), so an old run gets a new
report after an upgrade and a report can be made on a machine that never saw the run.
:func:`write_report` is what a run calls at its end. ``--png`` also draws the charts as PNG
files (matplotlib, the ``report`` extra) for CI artifacts and documents, and ``--format md``
prints a Markdown summary for a pull-request comment.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from llmload.config.commands import declare
from llmload.errors import ConfigError, ResultsError
from llmload.export.charts import chart_data, charts_block
from llmload.export.distributions import distribution_figures, read_histograms
from llmload.export.markdown import report_markdown
from llmload.export.plots import NO_PLOTS, can_draw, write_pngs
from llmload.export.report_page import render_report
from llmload.export.request_sample import sample_requests
from llmload.export.rundata import RunData, load_run
from llmload.export.series import FigureSpec, report_figures
from llmload.export.tables import Row, stage_rows, write_stages_csv

STAGES_CSV = "stages.csv"
REPORT_HTML = "report.html"


def figures_of(run: RunData, rows: Sequence[Row]) -> tuple[FigureSpec, ...]:
    """The run's charts, chosen by its shape: distributions of every stage that measured
    something, then the curves that hold more than one point."""
    measured = any((r.get("requests_ok") or 0) > 0 for r in rows)
    histograms = read_histograms(run.path) if measured else None
    distributions = distribution_figures(histograms, rows) if histograms else ()
    return (*distributions, *report_figures(rows, run.timeseries))


def write_report(run_dir: Path, out_dir: Path | None = None, *, png: bool = False) -> Path:
    """Write ``stages.csv`` and ``report.html`` (and with ``png`` one PNG per chart); returns
    the HTML's path. ``out_dir`` defaults to the run directory itself."""
    run = load_run(Path(run_dir))
    out = Path(out_dir) if out_dir is not None else run.path
    try:
        out.mkdir(parents=True, exist_ok=True)
        rows = stage_rows(run.summary)
        write_stages_csv(out / STAGES_CSV, rows)
        figures = figures_of(run, rows)
        if png:
            if not can_draw():
                raise ResultsError(NO_PLOTS.replace("No plots", "--png cannot draw"))
            write_pngs(figures, out)
        block = charts_block(chart_data(figures, sample_requests(run.path, run.summary)))
        target = out / REPORT_HTML
        tmp = target.with_suffix(".html.tmp")
        tmp.write_text(render_report(run, rows, block), encoding="utf-8")
        os.replace(tmp, target)  # a browser left open on the old report never sees half a file
    except OSError as exc:
        raise ResultsError(f"cannot write the report into {out}: {exc}") from None
    return target


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload report",
        description="Rebuild a run's stages.csv and self-contained report.html from its results "
        "directory, or print its Markdown summary.",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a results directory (holds summary.json)")
    declare(p, "--out", "--png", "--format", defaults={"--format": "html"})
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.format == "console":
        raise ConfigError("--format", args.format, "report writes html files or prints markdown")
    if args.format == "markdown":  # for a pull-request comment, instead of writing files
        sys.stdout.write(report_markdown(load_run(args.run_dir)))
        return 0
    path = write_report(args.run_dir, args.out, png=args.png)
    print(f"report: {path}")
    return 0
