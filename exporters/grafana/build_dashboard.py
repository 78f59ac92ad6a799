"""Generates ``llmload.json``, the Grafana dashboard: ``python exporters/grafana/build_dashboard.py``.

The dashboard is data, but 30 panels of hand-edited JSON drift; this script is its source. The
output is normalised through the Grafana Foundation SDK's typed model (``Dashboard.from_json`` ->
``to_json``) when the SDK is installed, so the committed JSON is exactly what that model reads
and writes back; tests/unit/export/test_prometheus_dashboard.py checks both.

Every llmload query is filtered by the ``target`` and ``model`` variables and, through
``llmload_run_info``, by ``run_id`` (series carry no run id: their labels stay bounded).
Server-side queries read vLLM (``vllm:*``) and SGLang (``sglang:*``) series by ``model_name``,
and llama.cpp's (``llamacpp:*``, which carry no model label) whole; a panel shows whichever the
server exports.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "llmload.json"
DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'target=~"$target", model=~"$model"'
RUN = 'and on (job, instance) llmload_run_info{run_id=~"$run_id"}'
SERVER = 'model_name=~"$model"'
RATE = "$__rate_interval"


def runs(expr: str) -> str:
    """``expr`` (an llmload vector) kept only where the run matches ``$run_id``."""
    return f"{expr} {RUN}"


def quantile(q: float, name: str) -> str:
    return f"histogram_quantile({q}, sum by (le) ({runs(f'rate({name}_bucket{{{SEL}}}[{RATE}])')}))"


def server_quantile(q: float, name: str) -> str:
    return f"histogram_quantile({q}, sum by (le) (rate({name}_bucket{{{SERVER}}}[{RATE}])))"


def rate_sum(name: str, extra: str = "", by: str = "") -> str:
    sel = f"{SEL}, {extra}" if extra else SEL
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} ({runs(f'rate({name}{{{sel}}}[{RATE}])')})"


def mean(name: str) -> str:
    return f"{rate_sum(name + '_sum')} / {rate_sum(name + '_count')}"


def gauge(name: str, by: str = "") -> str:
    grouping = f" by ({by})" if by else ""
    return f"max{grouping} ({runs(f'{name}{{{SEL}}}')})"


def target(expr: str, legend: str, ref: int, fmt: str | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": chr(65 + ref)}
    if fmt:
        t["format"] = fmt
    return t


def percentiles(name: str) -> list[tuple[str, str]]:
    return [(quantile(q, name), f"p{round(q * 100)}") for q in (0.5, 0.9, 0.99)]


# Stated explicitly: the typed model's defaults would hide the legend.
TIMESERIES_OPTIONS = {"legend": {"calcs": ["mean", "max"], "displayMode": "table",
                                 "placement": "bottom", "showLegend": True},
                      "tooltip": {"mode": "multi", "sort": "desc"}}


class Layout:
    """Assigns ids and grid positions: rows of full width, panels 12 or 8 wide, 8 high."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self.x = self.y = 0

    def row(self, title: str) -> None:
        self.x, self.y = 0, self.y + (8 if self.x else 0)
        self.panels.append({"collapsed": False, "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
                            "id": len(self.panels) + 1, "panels": [], "title": title, "type": "row"})
        self.y += 1

    def panel(self, title: str, description: str, queries: list[tuple[str, str]], unit: str,
              *, kind: str = "timeseries", width: int = 12, extra: dict[str, Any] | None = None) -> None:
        if self.x + width > 24:
            self.x, self.y = 0, self.y + 8
        fmt = "heatmap" if kind == "heatmap" else None
        options = extra if extra is not None else TIMESERIES_OPTIONS
        panel: dict[str, Any] = {
            "datasource": DS, "description": description,
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "gridPos": {"h": 8, "w": width, "x": self.x, "y": self.y},
            "id": len(self.panels) + 1, "options": options,
            "targets": [target(e, legend, i, fmt) for i, (e, legend) in enumerate(queries)],
            "title": title, "type": kind,
        }
        self.panels.append(panel)
        self.x += width


def heatmap(name: str) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    expr = f"sum by (le) ({runs(f'increase({name}_bucket{{{SEL}}}[{RATE}])')})"
    return [(expr, "{{le}}")], {"calculate": False, "cellGap": 1, "yAxis": {"unit": "s"},
                                "tooltip": {"show": True, "yHistogram": True}}


def throughput(lay: Layout) -> None:
    lay.row("Throughput")
    lay.panel("Output tokens/s", "Output tokens of finished requests per second (every phase), by "
              "stage. The run's headline tok/s counts tokens as they are read, over the measured "
              "window only; over a steady window the two agree.",
              [(rate_sum("llmload_generation_tokens_total", by="stage"), "stage {{stage}}")], "short")
    lay.panel("Requests/s by outcome", "Finished requests per second: ok, unfinished, or the "
              "error kind.", [(rate_sum("llmload_requests_total", by="outcome"), "{{outcome}}")],
              "reqps")
    lay.panel("Users and in-flight requests", "Running users, requests in flight, the current "
              "stage's concurrency and the connected workers.",
              [(gauge("llmload_users"), "users"), (gauge("llmload_in_flight_requests"), "in flight"),
               (gauge("llmload_stage_concurrency"), "stage concurrency"),
               (gauge("llmload_connected_workers"), "workers")], "short")
    lay.panel("Stage", "Index of the current stage (a sweep steps through its levels).",
              [(gauge("llmload_stage"), "stage")], "none")


def latency(lay: Layout) -> None:
    lay.row("Latency (client side)")
    for title, name, text in (
        ("TTFT", "llmload_time_to_first_token_seconds", "Time to the first token-bearing event."),
        ("TTFOT", "llmload_time_to_first_output_token_seconds", "Time to the first content token "
         "(reasoning excluded)."),
        ("ITL (per token)", "llmload_inter_token_latency_fine_seconds", "Gap between token reads "
         "split over the tokens each read carried; fine buckets."),
        ("TPOT (per request)", "llmload_request_time_per_output_token_fine_seconds", "(last token "
         "- first token) / (N - 1) of each request; fine buckets."),
        ("E2E latency", "llmload_e2e_request_latency_fine_seconds", "Request sent to [DONE]; fine "
         "buckets."),
        ("Chunk gap", "llmload_chunk_gap_fine_seconds", "Raw gap between token-bearing reads (what "
         "vLLM's benchmark client calls ITL); fine buckets."),
    ):
        lay.panel(f"{title} p50 / p90 / p99", f"{text} Quantiles interpolated by "
                  "histogram_quantile over the last rate interval; ok requests only.",
                  percentiles(name), "s", width=8)
    lay.panel("Tokens per event (mean)", "Tokens per token-bearing event after the first: above "
              "1 under speculative decoding or server-side coalescing.",
              [(mean("llmload_tokens_per_event"), "tokens/event")], "short", width=8)
    lay.panel("Client queue time p99", "How late the client sent what its load model scheduled "
              "(open-loop modes); coordinated omission shows here.",
              [(quantile(0.99, "llmload_client_queue_seconds"), "p99")], "s", width=8)
    for title, name in (("TTFT", "llmload_time_to_first_token_seconds"),
                        ("ITL", "llmload_inter_token_latency_fine_seconds"),
                        ("E2E", "llmload_e2e_request_latency_fine_seconds")):
        queries, options = heatmap(name)
        lay.panel(f"{title} heatmap", f"Samples per {title} bucket per interval.", queries, "short",
                  kind="heatmap", width=8, extra=options)


def errors_and_health(lay: Layout) -> None:
    lay.row("Errors and client health")
    lay.panel("Errors by kind", "Failed requests per second by error kind (ok excluded).",
              [(rate_sum("llmload_requests_total", 'outcome!="ok"', by="outcome"), "{{outcome}}")],
              "reqps", width=8)
    lay.panel("Error ratio", "Failed / finished requests.",
              [(rate_sum("llmload_requests_total", 'outcome!="ok"') + " / "
                + rate_sum("llmload_requests_total"), "error ratio")], "percentunit", width=8)
    lay.panel("Client loop lag p99", "Event-loop lag p99 per worker: above 5 ms the client, not "
              "the server, shaped the timings (client-bound).",
              [(gauge("llmload_client_loop_lag_p99_seconds", by="worker"), "{{worker}}")], "s", width=8)
    lay.panel("Client CPU", "CPU per worker in cores: above 0.8 the stage is flagged client-bound.",
              [(gauge("llmload_client_cpu_ratio", by="worker"), "{{worker}}")], "percentunit")
    lay.panel("Events per read", "Token-bearing events per socket read, per worker: above 1 the "
              "client read late.", [(gauge("llmload_client_events_per_read", by="worker"), "{{worker}}")],
              "short")


def server(lay: Layout) -> None:
    lay.row("Server side (vLLM / SGLang / llama.cpp, when scraped)")
    for title, ours, vllm, sglang, q in (
        ("TTFT p99", "llmload_time_to_first_token_seconds", "vllm:time_to_first_token_seconds",
         "sglang:time_to_first_token_seconds", 0.99),
        ("ITL p50", "llmload_inter_token_latency_seconds", "vllm:inter_token_latency_seconds",
         "sglang:inter_token_latency_seconds", 0.5),
        ("E2E p99", "llmload_e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds",
         "sglang:e2e_request_latency_seconds", 0.99),
    ):
        lay.panel(f"{title}: client vs server", "Client and server quantiles from identical vLLM "
                  "bucket bounds, so they interpolate alike; SGLang's bounds differ, compare its "
                  "means instead. The client's includes the network and the HTTP stack.",
                  [(quantile(q, ours), "llmload"), (server_quantile(q, vllm), "vllm"),
                   (server_quantile(q, sglang), "sglang"),
                   (f"sum(rate({sglang}_sum{{{SERVER}}}[{RATE}])) / "
                    f"sum(rate({sglang}_count{{{SERVER}}}[{RATE}]))", "sglang mean")], "s", width=8)
    lay.panel("Output tokens/s: client vs server", "Tokens the client received vs tokens the "
              "server generated.",
              [(rate_sum("llmload_generation_tokens_total"), "llmload"),
               (f"sum(rate(vllm:generation_tokens_total{{{SERVER}}}[{RATE}]))", "vllm"),
               (f"sum(rate(sglang:generation_tokens_total{{{SERVER}}}[{RATE}]))", "sglang"),
               (f"sum(rate(llamacpp:tokens_predicted_total[{RATE}]))", "llama.cpp")],
              "short", width=8)
    lay.panel("Server queue", "Requests running and waiting on the server vs the client's "
              "in-flight requests.",
              [(gauge("llmload_in_flight_requests"), "llmload in flight"),
               (f"sum(vllm:num_requests_running{{{SERVER}}})", "vllm running"),
               (f"sum(vllm:num_requests_waiting{{{SERVER}}})", "vllm waiting"),
               (f"sum(sglang:num_running_reqs{{{SERVER}}})", "sglang running"),
               (f"sum(sglang:num_queue_reqs{{{SERVER}}})", "sglang queued"),
               ("sum(llamacpp:requests_processing)", "llama.cpp processing"),
               ("sum(llamacpp:requests_deferred)", "llama.cpp deferred")], "short", width=8)
    lay.panel("KV cache usage", "Fraction of the server's KV cache in use.",
              [(f"max(vllm:kv_cache_usage_perc{{{SERVER}}})", "vllm"),
               (f"max(sglang:token_usage{{{SERVER}}})", "sglang"),
               ("max(llamacpp:kv_cache_usage_ratio)", "llama.cpp")], "percentunit", width=8)
    lay.panel("llama.cpp: server time per token", "The server's own seconds per prompt token "
              "evaluated and per token generated (llamacpp:prompt_seconds_total, "
              "tokens_predicted_seconds_total), beside the client's TPOT.",
              [(f"sum(rate(llamacpp:prompt_seconds_total[{RATE}])) / "
                f"sum(rate(llamacpp:prompt_tokens_total[{RATE}]))", "prompt s/token"),
               (f"sum(rate(llamacpp:tokens_predicted_seconds_total[{RATE}])) / "
                f"sum(rate(llamacpp:tokens_predicted_total[{RATE}]))", "generation s/token"),
               (mean("llmload_request_time_per_output_token_seconds"), "llmload TPOT mean")], "s", width=8)
    lay.panel("Speculative decoding", "Accepted / draft tokens (vLLM) and accept length "
              "(SGLang); compare with the client's tokens per event.",
              [(f"sum(rate(vllm:spec_decode_num_accepted_tokens_total{{{SERVER}}}[{RATE}])) / "
                f"sum(rate(vllm:spec_decode_num_draft_tokens_total{{{SERVER}}}[{RATE}]))",
                "vllm acceptance"),
               (f"max(sglang:spec_accept_length{{{SERVER}}})", "sglang accept length"),
               (mean("llmload_tokens_per_event"), "llmload tokens/event")], "short", width=8)


def variable(name: str, query: str) -> dict[str, Any]:
    return {"allValue": ".*", "current": {"text": "All", "value": "$__all"}, "datasource": DS,
            "includeAll": True, "label": name, "multi": True, "name": name,
            "query": {"query": query, "refId": name}, "refresh": 2, "sort": 1, "type": "query"}


def dashboard() -> dict[str, Any]:
    lay = Layout()
    for section in (throughput, latency, errors_and_health, server):
        section(lay)
    info = "llmload_run_info"
    return {
        "annotations": {"list": []}, "description": "llmload: the client's view of an LLM "
        "server under load, beside the server's own metrics. See docs/grafana.md.",
        "editable": True, "graphTooltip": 1, "panels": lay.panels, "refresh": "5s",
        "schemaVersion": 39, "tags": ["llmload", "llm", "load-test"],
        "templating": {"list": [
            {"current": {"text": "Prometheus", "value": "prometheus"}, "label": "Data source",
             "name": "datasource", "query": "prometheus", "type": "datasource"},
            variable("run_id", f"label_values({info}, run_id)"),
            variable("target", f'label_values({info}{{run_id=~"$run_id"}}, target)'),
            variable("model", f'label_values({info}{{run_id=~"$run_id", target=~"$target"}}, model)'),
        ]},
        "time": {"from": "now-30m", "to": "now"}, "timezone": "browser", "title": "llmload",
        "uid": "llmload-main", "version": 1,
    }


def normalized(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` read into the SDK's typed model and written back (the identity on valid input)."""
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard

    register_default_plugins()
    out: dict[str, Any] = json.loads(json.dumps(Dashboard.from_json(data), cls=JSONEncoder))
    return out


def render() -> str:
    return json.dumps(normalized(dashboard()), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    text = render()
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if OUT.read_text() == text else "llmload.json is stale: run build_dashboard.py")
    OUT.write_text(text)
