"""The interactive charts of llmload's pages: figures as JSON, and the scripts that draw them.

The chart library is uPlot (``static/uPlot.iife.min.js``, MIT, vendored from npm at 1.6.32 with
its licence; docs/reports.md has the measured comparison that chose it), and ``static/charts.js``
is ours: the same code draws report.html, ``llmload compare``'s page and the web UI's live
charts. A page inlines both scripts and its data, so it opens from ``file://`` with no network,
and its Content-Security-Policy allows exactly those scripts (by hash) and no request at all.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import cache
from importlib.resources import files

import msgspec
import orjson

from llmload.export.request_sample import RequestSample
from llmload.export.series import FigureSpec, Series
from llmload.protocol.jsonvalue import JSON

CAPTIONS = {
    "throughput": "Aggregate output tok/s against concurrency",
    "ttft": "Time to first token, p50 and p99, against concurrency",
    "itl": "Inter-token latency, p50 and p99, against concurrency",
    "tpot": "Time per output token, p50 and p99, against concurrency",
    "throughput_latency": "Per-stream decode tok/s against aggregate tok/s, labelled by concurrency",
    "timeline": "Output tok/s (left) and requests in flight (right), each second",
    "pareto": "Per-user output tok/s against aggregate output tok/s",
    "pareto_ttft": "TTFT p99 against aggregate output tok/s",
}
_LICENCE = "/* uPlot 1.6.32, (c) 2022 Leon Sorokin, MIT License (uPlot.LICENSE beside this file) */\n"


@cache
def _static(name: str) -> str:
    return (files("llmload.export") / "static" / name).read_text(encoding="utf-8")


def library() -> str:
    """uPlot, its banner (a web address) swapped for the licence line without one."""
    text = _static("uPlot.iife.min.js")
    if text.startswith("/*!"):
        text = text[text.index("*/") + 2 :].lstrip("\n")
    return _LICENCE + text


def scripts() -> tuple[str, str]:
    """The page's two scripts, library first."""
    return library(), _static("charts.js")


def live_scripts() -> tuple[str, str, str]:
    """The web UI's: the page's two, then the one that mounts them in the LLM tab and polls."""
    return (*scripts(), _static("live.js"))


def styles() -> str:
    return _static("uPlot.min.css") + _CSS


_CSS = """
.charts .plots figure{padding:4px}.charts .uplot{font-family:inherit}
.controls{margin:6px 0;display:flex;gap:6px;align-items:center;flex-wrap:wrap}
.controls button,.controls select{font:inherit;padding:2px 8px}
th.sortable{cursor:pointer;text-decoration:underline dotted}
.requests-scroll{max-height:480px;overflow:auto}
#request-info{min-height:1.4em}
.llmload-live{background:#fff;color:#1d2330;padding:8px 12px;margin:8px 0;border-radius:4px;
font:14px/1.45 system-ui,sans-serif}
.llmload-live h2{font-size:16px;margin:10px 0 4px}.llmload-live .note{color:#5b6474;font-size:13px}
.llmload-live .plots{display:flex;flex-wrap:wrap;gap:12px}
.llmload-live figure{margin:0;background:#fff;border:1px solid #dde1e7}
"""


def csp_hashes(sources: Sequence[str]) -> str:
    """``'sha256-...'`` for each inline script, for the page's script-src."""
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in sources
    )


def _series(s: Series) -> dict[str, JSON]:
    return {
        "label": s.label,
        "x": list(s.x),
        "y": list(s.y),
        "low": None if s.low is None else list(s.low),
        "high": None if s.high is None else list(s.high),
        "point_labels": None if s.point_labels is None else list(s.point_labels),
        "right_axis": s.right_axis,
        "step": s.step,
        "dashed": s.dashed,
        "stage": s.stage,
    }


def figure_json(spec: FigureSpec) -> dict[str, JSON]:
    return {
        "name": spec.name,
        "title": spec.title,
        "caption": CAPTIONS.get(spec.name.removeprefix("compare_"), ""),
        "group": spec.group,
        "xlabel": spec.xlabel,
        "ylabel": spec.ylabel,
        "xscale": spec.xscale,
        "right_ylabel": spec.right_ylabel,
        "markers": [[x, label] for x, label in spec.markers],
        "series": [_series(s) for s in spec.series],
    }


def chart_data(figures: Sequence[FigureSpec], requests: RequestSample | None = None) -> dict[str, JSON]:
    return {
        "figures": [figure_json(f) for f in figures],
        "requests": None if requests is None else msgspec.to_builtins(requests),
    }


def data_json(data: dict[str, JSON]) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` (so no ``</script>``), and no
    ``scheme://`` (the page carries no web address, even in a server's error message)."""
    text = orjson.dumps(data).decode()
    return text.replace("<", "\\u003c").replace("://", ":\\/\\/")


def charts_block(data: dict[str, JSON]) -> str:
    """Where the charts go, and their data (an inert JSON script the page's code reads)."""
    return (
        '<div id="charts"></div>'
        f'<script type="application/json" id="llmload-charts">{data_json(data)}</script>'
    )
