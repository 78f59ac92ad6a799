"""``stages.csv``: one row per stage, the single table every plot of the report is drawn from.

Numbers are written with ``repr`` so reading the file back gives the very floats that were
plotted; an absent value (TTFT of a non-streamed run, goodput without ``--slo``) is an empty cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from llmload.export.rundata import spec_decode
from llmload.results.summary import Stage, Summary

Cell = float | int | bool | None
Row = dict[str, Cell]

LATENCY_COLUMNS = tuple(
    f"{metric}_{q}_ms" for metric in ("ttft", "itl", "tpot", "e2e") for q in ("p50", "p90", "p99")
)
STAGE_COLUMNS = (
    "index",
    "concurrency",
    "window_s",
    "requests_ok",
    "requests_failed",
    "requests_unfinished",
    "error_rate",
    "output_tok_per_s",
    "input_tok_per_s",
    "total_tok_per_s",
    "request_per_s",
    "goodput_req_per_s",
    *LATENCY_COLUMNS,
    "decode_tok_per_s",
    "tokens_per_event",
    "server_acceptance_rate",
    "server_acceptance_length",
    "images_per_request",
    "image_bytes_per_request",
    "usd_per_m_output_tokens",
    "usd_per_m_input_tokens",
    "gpu_util_pct",
    "gpu_power_w",
    "joules_per_output_token",
    "client_bound",
)
INT_COLUMNS = frozenset({"index", "concurrency", "requests_ok", "requests_failed", "requests_unfinished"})


def _latency(stage: Stage, metric: str, q: str) -> float | None:
    obj = stage.latency(metric)
    return None if obj is None else obj.quantile(q)


def decode_tok_per_s(stage: Stage) -> float | None:
    """Per-stream decode speed, 1000 / TPOT p50: the same formula as the summary's headline."""
    tpot = _latency(stage, "tpot", "p50")
    return round(1000.0 / tpot, 3) if tpot else None


def stage_row(stage: Stage) -> Row:
    req = stage.requests
    rate, length = spec_decode(stage)
    row: Row = {
        "index": stage.index,
        "concurrency": stage.concurrency,
        "window_s": stage.duration_s,
        "requests_ok": req.ok,
        "requests_failed": req.failed,
        "requests_unfinished": req.unfinished,
        "error_rate": stage.error_rate,
        "output_tok_per_s": stage.output_tok_per_s,
        "input_tok_per_s": stage.input_tok_per_s,
        "total_tok_per_s": stage.total_tok_per_s,
        "request_per_s": stage.request_per_s,
        "goodput_req_per_s": stage.goodput_req_per_s,
    }
    for column in LATENCY_COLUMNS:
        metric, q, _ms = column.split("_")
        row[column] = _latency(stage, metric, q)
    row["decode_tok_per_s"] = decode_tok_per_s(stage)
    row["tokens_per_event"] = None if stage.tokens_per_event is None else stage.tokens_per_event.mean
    row["server_acceptance_rate"] = rate
    row["server_acceptance_length"] = length
    images, image_bytes = stage.images_per_request, stage.image_bytes_per_request
    row["images_per_request"] = images.mean if images else None
    row["image_bytes_per_request"] = image_bytes.mean if image_bytes else None
    cost, gpu = stage.cost, stage.gpu
    row["usd_per_m_output_tokens"] = cost.usd_per_m_output_tokens if cost else None
    row["usd_per_m_input_tokens"] = cost.usd_per_m_input_tokens if cost else None
    row["gpu_util_pct"] = gpu.util_pct.mean if gpu and gpu.util_pct else None
    row["gpu_power_w"] = gpu.power_w.mean if gpu and gpu.power_w else None
    row["joules_per_output_token"] = gpu.joules_per_output_token if gpu else None
    row["client_bound"] = stage.client_bound
    return row


def stage_rows(summary: Summary) -> list[Row]:
    return [stage_row(stage) for stage in summary.stages]


def _cell_text(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def stages_csv(rows: Sequence[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(STAGE_COLUMNS)
    writer.writerows([_cell_text(row.get(c)) for c in STAGE_COLUMNS] for row in rows)
    return out.getvalue()


def write_stages_csv(path: Path, rows: Sequence[Row]) -> Path:
    path.write_text(stages_csv(rows))
    return path


def _parse(column: str, text: str) -> Cell:
    if text == "":
        return None
    if column == "client_bound":
        return text == "true"
    return int(text) if column in INT_COLUMNS else float(text)


def read_stages_csv(path: Path) -> list[Row]:
    """``stages.csv`` back as typed rows (what ``stage_rows`` produced)."""
    with path.open(newline="") as f:
        return [{c: _parse(c, row.get(c) or "") for c in STAGE_COLUMNS} for row in csv.DictReader(f)]
