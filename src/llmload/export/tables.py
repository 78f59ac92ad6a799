"""``stages.csv``: one row per stage, the single table every plot of the report is drawn from.

Numbers are written with ``repr`` so reading the file back gives the very floats that were
plotted; an absent value (TTFT of a non-streamed run, goodput without ``--slo``) is an empty cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from llmload.metrics.catalog import TABLE_LATENCIES, Column, latency_column
from llmload.results.speculation import spec_decode
from llmload.results.summary import Summary
from llmload.results.summary_stage import Stage

Cell = float | int | bool | None
Row = dict[str, Cell]

QUANTILES = ("p50", "p90", "p99")  # of each of the catalog's TABLE_LATENCIES
# Every column of stages.csv in the file's order, with the header and decimals a table shows it
# with: the report, the web UI and the comparison pick theirs from here by key, so one column
# reads the same in all of them. The latency columns are the catalog's.
COLUMNS: tuple[Column, ...] = (
    Column("index", "stage"),
    Column("concurrency", "C"),
    Column("window_s", "window s"),
    Column("requests_ok", "ok"),
    Column("requests_failed", "failed"),
    Column("requests_unfinished", "unfinished"),
    Column("error_rate", "error rate", 4),
    Column("output_tok_per_s", "out tok/s", 1),
    Column("input_tok_per_s", "in tok/s", 1),
    Column("total_tok_per_s", "total tok/s", 1),
    Column("request_per_s", "req/s", 2),
    Column("goodput_req_per_s", "goodput req/s", 2),
    *(latency_column(metric, q) for metric in TABLE_LATENCIES for q in QUANTILES),
    Column("decode_tok_per_s", "decode tok/s", 1),
    Column("tokens_per_event", "tokens/event", 2),
    Column("server_acceptance_rate", "server accept rate", 2),
    Column("server_acceptance_length", "server accept len", 2),
    Column("images_per_request", "images/req", 1),
    Column("image_bytes_per_request", "image bytes/req", 0),
    Column("usd_per_m_output_tokens", "$/M output tokens", 4),
    Column("usd_per_m_input_tokens", "$/M input tokens", 4),
    Column("gpu_util_pct", "GPU util %", 1),
    Column("gpu_power_w", "GPU power W", 0),
    Column("joules_per_output_token", "J per output token", 3),
    Column("client_bound", "client-bound"),
)
STAGE_COLUMNS = tuple(c.key for c in COLUMNS)
_BY_KEY = {c.key: c for c in COLUMNS}


def columns(*keys: str) -> tuple[Column, ...]:
    """The stages.csv columns ``keys``, in that order; KeyError for a column the file lacks."""
    return tuple(_BY_KEY[key] for key in keys)


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
    for metric in TABLE_LATENCIES:
        for q in QUANTILES:
            row[latency_column(metric, q).key] = _latency(stage, metric, q)
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
