"""What ``--otlp-endpoint`` costs a worker per request: building and queueing the span, then
encoding and sending it, beside the requests.jsonl line every request already costs.

    .venv/bin/python bench/otlp_cost.py [--records 20000] [--rounds 5] [--smoke]
                                        [--out bench/results/otlp_cost.json]

One process, one core's worth of work, three measurements per round on the same records
(a 128-token streamed answer each, every stamp set, as a worker folds it):

- ``line``: ``orjson.dumps(record.to_json())``, the requests.jsonl line: the reference;
- ``span``: ``RequestSpans.add`` with a batch processor whose exporter discards: what the fold
  adds to each request (span, attributes, three events, the queue);
- ``export``: the SDK's OTLP/HTTP exporter sending those spans in batches of 512 (protobuf
  encoding and a POST) to a collector in a child process that reads and discards them: the
  background work, per span.

Rounds alternate their order; reported are each measure's best and median over the rounds, and
``span / line`` from the best of each. ``--smoke`` (CI): 500 records, one round, nothing kept
unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord, TokenSource
from llmload.core.tracecontext import trace_ids
from llmload.export.otlp import RequestSpans
from llmload.metrics import derive

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "otlp_cost.json"
MS = 1_000_000
BATCH = 512
COLLECTOR = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Keep(SpanExporter):
    """Keeps what it is given: the spans the export measure then sends."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


def records(n: int) -> list[RequestRecord]:
    out = []
    for i in range(n):
        r = RequestRecord(
            f"local-{i % 100}-{i}", f"u{i % 100}", 0, Phase.MEASURE, "chat", True, scheduled_ns=0
        )
        r.trace_id, r.span_id = trace_ids("bench", r.request_id)
        r.began_ns, r.sent_ns, r.written_ns, r.first_byte_ns = 0, 10_000, 20_000, 100_000
        stamps = [30 * MS + k * 10 * MS for k in range(128)]
        r.event_ns, r.event_tokens = array("q", stamps), array("l", [1] * 128)
        r.first_token_ns = r.first_output_ns = stamps[0]
        r.last_token_ns = r.done_ns = stamps[-1]
        r.output_tokens, r.prompt_tokens, r.status = 128, 512, 200
        r.token_source, r.events, r.reads, r.finish_reason = TokenSource.USAGE, 130, 129, "length"
        out.append(r)
    return out


def line_us(rs: list[RequestRecord]) -> float:
    start = time.process_time_ns()
    for r in rs:
        orjson.dumps(r.to_json())
    return (time.process_time_ns() - start) / len(rs) / 1e3


def span_us(rs: list[RequestRecord]) -> tuple[float, list[ReadableSpan]]:
    keep = Keep()
    spans = RequestSpans(exporter=keep, run_id="bench", process="local", model="m", wall_minus_perf_ns=0)
    measured = [(r, derive.measure(r)) for r in rs]  # the fold derives them once, for all it feeds
    start = time.process_time_ns()
    for r, m in measured:
        spans.add(r, m)
    took = time.process_time_ns() - start
    spans.close()
    return took / len(rs) / 1e3, keep.spans


def export_us(spans: list[ReadableSpan], url: str) -> float:
    exporter = OTLPSpanExporter(endpoint=url)
    start = time.process_time_ns()
    for i in range(0, len(spans), BATCH):
        assert exporter.export(spans[i : i + BATCH]) is SpanExportResult.SUCCESS
    took = time.process_time_ns() - start
    exporter.shutdown()
    return took / len(spans) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    n, rounds = (500, 1) if args.smoke else (args.records, args.rounds)
    out = args.out if args.out is not None or args.smoke else DEFAULT_OUT
    collector = subprocess.Popen([sys.executable, "-c", COLLECTOR], stdout=subprocess.PIPE, text=True)
    try:
        assert collector.stdout is not None
        url = f"http://127.0.0.1:{collector.stdout.readline().strip()}/v1/traces"
        rs = records(n)
        got: dict[str, list[float]] = {"line": [], "span": [], "export": []}
        for k in range(rounds):
            if k % 2:
                took, spans = span_us(rs)
                got["span"].append(took)
                got["line"].append(line_us(rs))
            else:
                got["line"].append(line_us(rs))
                took, spans = span_us(rs)
                got["span"].append(took)
            got["export"].append(export_us(spans, url))
    finally:
        collector.kill()
        collector.wait()
    result: dict[str, Any] = {
        "command": " ".join(["bench/otlp_cost.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "records": n,
        "rounds": rounds,
        "us_per_request": {
            name: {
                "best": round(min(v), 2),
                "median": round(statistics.median(v), 2),
                "rounds": [round(x, 2) for x in v],
            }
            for name, v in got.items()
        },
    }
    result["span_over_line"] = round(min(got["span"]) / min(got["line"]), 2)
    for name, v in result["us_per_request"].items():
        print(f"{name:>7}: best {v['best']:8.2f} µs per request, median {v['median']:8.2f}")
    print(f"span / line (best of each): {result['span_over_line']}")
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
