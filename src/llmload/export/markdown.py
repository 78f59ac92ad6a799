"""``llmload report RUN --format md``: a run's result as Markdown, for a pull-request comment.

The verdict, the headline and the stage table, with the same columns and decimals as the
report's (stages.csv's column definitions), and every warning. The figures stay in report.html.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.export.html import fmt
from llmload.export.rundata import RunData, all_warnings, verdict_of
from llmload.export.tables import Row, columns, stage_rows
from llmload.metrics.catalog import TABLE_LATENCIES, latency_column
from llmload.results.saturation import saturation_text

_COLUMNS = (
    *columns("index", "concurrency", "requests_ok", "requests_failed", "output_tok_per_s"),
    *(latency_column(metric, q) for metric in TABLE_LATENCIES for q in ("p50", "p99")),
    *columns("decode_tok_per_s", "client_bound"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table, its cells escaped."""
    out = ["| " + " | ".join(map(_cell, headers)) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return out


def report_markdown(run: RunData) -> str:
    summary = run.summary
    info = summary.run
    verdict = verdict_of(summary)
    mark = "✅" if verdict.code == 0 else "❌"
    lines = [
        f"### llmload · run `{run.run_id}`",
        "",
        f"{info.target or '?'} · model `{info.model or '?'}` · scenario {info.scenario or '?'}",
        "",
        f"{mark} **exit {verdict.code} ({verdict.name})**: {verdict.line or verdict.name}",
        "",
    ]
    head = summary.headline
    if head:
        peak = fmt(head.peak_tok_per_s) + (
            "" if head.peak_concurrency is None else f" at C={head.peak_concurrency}"
        )
        lines += table(
            ("", "value"),
            [
                ("single-stream output tok/s (C=1)", fmt(head.single_stream_tok_per_s)),
                ("peak output tok/s", peak),
                ("saturation", saturation_text(head.saturation)),
            ],
        )
        lines.append("")
    rows: list[Row] = stage_rows(summary)
    if rows:
        shown = [c for c in _COLUMNS if any(r.get(c.key) is not None for r in rows)]
        lines += table(
            [c.header for c in shown], [[fmt(r.get(c.key), c.digits) for c in shown] for r in rows]
        )
        lines += ["", "Latencies in ms, over the requests sent in each stage's measured window.", ""]
    warnings = all_warnings(summary)
    if warnings:
        lines += [f"**Warnings ({len(warnings)})**", "", *(f"- {_cell(w)}" for w in warnings), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
