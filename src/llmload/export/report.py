"""``llmload report RUN_DIR``: a run's ``stages.csv``, PNG plots and self-contained ``report.html``.

Everything is rebuilt from the stored files (``summary.json``, and ``timeseries.csv`` when the
run wrote one), so an old run gets a new report after an upgrade and a report can be made on a
machine that never saw the run. :func:`write_report` is what a run calls at its end.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from llmload.errors import ResultsError
from llmload.export.plots import can_draw, write_pngs
from llmload.export.report_page import render_report
from llmload.export.rundata import load_run
from llmload.export.series import report_figures
from llmload.export.tables import stage_rows, write_stages_csv

STAGES_CSV = "stages.csv"
REPORT_HTML = "report.html"


def write_report(run_dir: Path, out_dir: Path | None = None) -> Path:
    """Write ``stages.csv``, one PNG per plot and ``report.html``; returns the HTML's path.

    ``out_dir`` defaults to the run directory itself.
    """
    run = load_run(Path(run_dir))
    out = Path(out_dir) if out_dir is not None else run.path
    try:
        out.mkdir(parents=True, exist_ok=True)
        rows = stage_rows(run.summary)
        write_stages_csv(out / STAGES_CSV, rows)
        measured = any((r.get("requests_ok") or 0) > 0 for r in rows)
        # Nothing measured: no plots of nothing (the verdict says why).
        drawn = measured and can_draw()
        pngs = write_pngs(report_figures(rows, run.timeseries), out) if drawn else {}
        target = out / REPORT_HTML
        tmp = target.with_suffix(".html.tmp")
        tmp.write_text(render_report(run, rows, pngs, plots_missing=measured and not drawn), encoding="utf-8")
        os.replace(tmp, target)  # a browser left open on the old report never sees half a file
    except OSError as exc:
        raise ResultsError(f"cannot write the report into {out}: {exc}") from None
    return target


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload report",
        description="Rebuild a run's stages.csv, plots and self-contained report.html from its "
        "results directory.",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a results directory (holds summary.json)")
    p.add_argument("--out", type=Path, help="write into this directory instead of RUN_DIR")
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    path = write_report(args.run_dir, args.out)
    print(f"report: {path}")
    return 0
