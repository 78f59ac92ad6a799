"""A comparison as console text, Markdown or a self-contained HTML page.

Runs are columns A, B, C ... named in a legend (run id, engine and version, target); the ratio
columns divide each run by A. Server differences sit right under the headline rows.
"""

from __future__ import annotations

import string
from collections.abc import Collection, Sequence
from dataclasses import replace

from llmload.export import html as h
from llmload.export.charts import chart_data, charts_block, scripts, styles
from llmload.export.compare import NOISE, CompareRow, Comparison
from llmload.export.report_tradeoffs import pareto_table
from llmload.export.rundata import verdict_of
from llmload.export.series import (
    FigureSpec,
    Series,
    informative,
    level_series,
    pareto_figures,
    pareto_points,
    throughput_figure,
)
from llmload.results.summary import Summary

_FOOTNOTE = (
    f"{NOISE} marks a ratio within both runs' noise: Welch's t-test over their repeats finds no "
    "difference at 95%. Without it, a ratio of two repeated levels is a difference beyond their "
    "noise; a level that ran once measured no noise (sweep with --repeat 3 to know)."
)


def _letters(n: int) -> list[str]:
    return list(string.ascii_uppercase[:n]) if n <= 26 else [f"R{i + 1}" for i in range(n)]


def _legend(c: Comparison) -> list[tuple[str, str, str, str]]:
    """Each run: letter, id, target, and its verdict (a failed run's numbers are no baseline)."""
    return [
        (letter, run.label, run.summary.run.target or "-", _verdict(run.summary))
        for letter, run in zip(_letters(len(c.runs)), c.runs, strict=True)
    ]


def _verdict(summary: Summary) -> str:
    v = verdict_of(summary)
    return "ok" if v.code == 0 else f"exit {v.code} {v.name}: {v.line}"


def _value_cells(row: CompareRow) -> list[str]:
    return [
        h.fmt(v.value, row.digits) + (f" {v.note}" if v.note and v.value is not None else "")
        for v in row.values
    ]


def _headers(c: Comparison, first: str, style: str) -> list[str]:
    """Run columns named by letter (console), letter and engine (HTML) or in full (Markdown)."""
    letters = _letters(len(c.runs))
    pairs = list(zip(letters, c.runs, strict=True))
    if style == "full":
        runs = [f"{x}: {run.label}" for x, run in pairs]
    elif style == "short":
        runs = [f"{x} ({run.engine})" if run.engine else x for x, run in pairs]
    else:
        runs = letters
    return [first, *runs, *(f"{x}/{letters[0]}" for x in letters[1:])]


def _rows(rows: Sequence[CompareRow]) -> list[list[str]]:
    return [[row.label, *_value_cells(row), *row.ratios()] for row in rows]


def text_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Collection[int] = (0,)
) -> list[str]:
    """Columns two spaces apart, numbers right-aligned, the columns in ``left`` (text) left."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            str(x).ljust(w) if i in left else str(x).rjust(w)
            for i, (x, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def console(c: Comparison) -> str:
    out = ["llmload compare", ""]
    out += [f"  {x}  {label}  ·  {target}  ·  {verdict}" for x, label, target, verdict in _legend(c)]
    out += ["", *text_table(_headers(c, "", "letter"), _rows(c.headline))]
    if c.server_diffs:
        out += [
            "",
            "server differences:",
            *text_table(["", *_letters(len(c.runs))], [[k, *v] for k, v in c.server_diffs]),
        ]
    out += [f"warning [{label}]: {w}" for label, w in c.warnings]
    out += ["", *text_table(_headers(c, "at chosen levels", "letter"), _rows(c.latency))]
    out += ["", *text_table(_headers(c, "per stage", "letter"), _rows(c.per_stage))]
    out += ["", "on the Pareto frontier (per-user against aggregate tok/s, all runs together):"]
    out += _frontier_lines(c)
    out += ["", _FOOTNOTE]
    return "\n".join(out) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    align = ["---" if i < left else "---:" for i in range(len(headers))]
    return ["| " + " | ".join(_md_cell(x) for x in r) + " |" for r in (headers, align, *rows)]


def markdown(c: Comparison) -> str:
    out = ["## llmload compare", ""]
    out += md_table(["run", "id (engine)", "target", "verdict"], [list(x) for x in _legend(c)], left=4)
    out += ["", *md_table(_headers(c, "", "full"), _rows(c.headline))]
    if c.server_diffs:
        out += [
            "",
            "**Server differences**",
            "",
            *md_table(["setting", *_letters(len(c.runs))], [[k, *v] for k, v in c.server_diffs]),
        ]
    if c.warnings:
        out += ["", *(f"- ⚠ **{label}**: {w}" for label, w in c.warnings)]
    out += ["", "### At chosen concurrency levels", "", *md_table(_headers(c, "", "full"), _rows(c.latency))]
    out += ["", "### Per stage", "", *md_table(_headers(c, "", "full"), _rows(c.per_stage))]
    out += ["", "**On the Pareto frontier** (per-user against aggregate tok/s, all runs together)", ""]
    out += [f"- {line.strip()}" for line in _frontier_lines(c)]
    out += ["", f"_{_FOOTNOTE}_"]
    return "\n".join(out) + "\n"


# A point a page singles out on the throughput chart: (legend, concurrency, output tok/s).
Mark = tuple[str, float, float]


def figures(c: Comparison, marks: Sequence[Mark] = ()) -> tuple[FigureSpec, ...]:
    """The overlaid plots: every run's tok/s, and per-stream decode speed, against concurrency;
    ``marks`` are single points drawn on the throughput chart (tune's picks)."""
    runs = {run.label: rows for run, rows in zip(c.runs, c.rows, strict=True)}
    tput = throughput_figure(runs, "compare_throughput")
    tput = replace(tput, series=(*tput.series, *(Series(label, (x,), (y,)) for label, x, y in marks)))
    decode = FigureSpec(
        "compare_decode",
        "Per-stream decode speed",
        "concurrency",
        "decode tok/s per stream",
        tuple(level_series(rows, "decode_tok_per_s", label) for label, rows in runs.items()),
        tput.xscale,
    )
    return (tput, decode, *pareto_figures(runs, "compare_"))


def _frontier_lines(c: Comparison) -> list[str]:
    """Each run's levels on the frontier over all runs (per-user against total tok/s)."""
    runs = {run.label: rows for run, rows in zip(c.runs, c.rows, strict=True)}
    points = pareto_points(runs)
    out = []
    for letter, run in zip(_letters(len(c.runs)), c.runs, strict=True):
        kept = [f"C={p.concurrency}" for p in points if p.run == run.label and p.on_frontier]
        out.append(f"  {letter}: {', '.join(kept) if kept else 'none (dominated at every level)'}")
    return out


def html_page(
    c: Comparison, *, title: str = "llmload compare", intro: Sequence[str] = (), marks: Sequence[Mark] = ()
) -> str:
    """The page; ``intro`` goes between the title and the comparison (``llmload tune``'s answer),
    and ``marks`` on its throughput chart."""
    headers = _headers(c, "", "short")
    body = [
        f"<h1>{h.esc(title)}</h1>",
        *intro,
        h.table(("run", "id (engine)", "target", "verdict"), _legend(c), left=4),
        h.warnings_box([f"{label}: {w}" for label, w in c.warnings]),
        h.heading("Headline"),
        h.table(headers, _rows(c.headline), css="big"),
    ]
    if c.server_diffs:
        body += [
            h.heading("Server differences", 3),
            h.table(["setting", *_letters(len(c.runs))], [[k, *v] for k, v in c.server_diffs], css="diff"),
        ]
    body += [
        h.heading("At chosen concurrency levels"),
        h.table(headers, _rows(c.latency)),
        h.heading("Per stage"),
        h.table(headers, _rows(c.per_stage)),
        h.paragraph(_FOOTNOTE, "note"),
        h.heading("Pareto frontier"),
        h.paragraph(
            "Over all runs together: the levels no other run's level beats on both per-user "
            "speed (1000 / TPOT p50) and aggregate output tok/s (tok/s), or on aggregate tok/s "
            "and TTFT p99 (TTFT).",
            "note",
        ),
        pareto_table(
            pareto_points({run.label: rows for run, rows in zip(c.runs, c.rows, strict=True)}), with_run=True
        ),
        charts_block(chart_data([f for f in figures(c, marks) if informative(f)])),
    ]
    return h.page(title, body, scripts=scripts(), css=styles())
