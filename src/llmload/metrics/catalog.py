"""Every metric llmload reports, defined once: unit, formula, meaning, and how peers differ.

Benchmark tools disagree on what TTFT, ITL and TPOT mean, so their numbers do not compare. This
catalog is the single definition: ``docs/metrics.md`` is generated from it
(``llmload.metrics.catalog_doc``, ``make docs``) and a test fails when the two drift.
Keys are the ones the aggregation uses for its histograms; ``summary_key`` is the field of a
stage in ``summary.json`` (a dotted path where nested, ``headline.`` for run-level values).

The code reads it too: the stage latencies (``LATENCY_KEYS``), their names in headers and the
columns that show them (``latency_column``) come from here, so the console, ``stages.csv``, the
report, the web UI's tab and the Prometheus families cannot name a metric differently. A metric
with one value per request carries how that value is read from the request (``sample``): the
stage's histograms, the exporter's buckets and goodput's per-request objectives fold every such
entry, so a new per-request latency is one entry here and its field in a stage of summary.json.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from llmload.core.record import RequestRecord
from llmload.metrics import derive

Unit = Literal["ms", "tok/s", "tokens", "events", "ratio", "req/s", "requests", "%", "events/s"]
Scope = Literal["request", "token", "read", "stage"]
# One request's value of a per-request metric, from the record and what the fold derived from it
# once: int ns for a latency (a mean rounded to the ns), the metric's own unit otherwise; None
# where it is undefined.
Sample = Callable[[RequestRecord, derive.Measures], int | None]


@dataclass(frozen=True, slots=True)
class MetricDef:
    key: str
    title: str
    unit: Unit
    scope: Scope
    formula: str
    definition: str
    peers: str
    summary_key: str
    # The exported series it is read from (a histogram, or a counter to take ``rate()`` of);
    # None where no single series carries it.
    prometheus: str | None
    # Its name in table headers and plot titles, where the title is too long for a column.
    label: str = ""
    # Decimals of its milliseconds in the stage tables: a TTFT of 812.4 ms needs no hundredths,
    # an ITL of 6.25 ms does.
    digits: int = 2
    # Per-request metrics: how one request's value is read (see ``Sample``); None elsewhere,
    # where the value comes from the reads (per token, per read) or the whole stage.
    sample: Sample | None = None
    # Goodput's per-request objective: ``--slo`` on it judges each request on its own value.
    goodput: bool = False
    # HELP of the exported histogram, where the exporter buckets it.
    help: str = ""

    @property
    def short(self) -> str:
        return self.label or self.title


CATALOG: tuple[MetricDef, ...] = (
    # -- per request ------------------------------------------------------------------------
    MetricDef("ttft", "TTFT", "ms", "request", "first_token - sent",
        "Time to the first token-bearing event: reasoning text and tool-call fragments count.",
        "vLLM's client stops its clock at the first event with a non-empty `choices` list, even "
        "a role-only or empty delta, so it reads lower.",
        "ttft_ms", "llmload_time_to_first_token_seconds", digits=1,
        sample=lambda r, m: m.ttft, goodput=True, help="Time to the first token-bearing event."),
    MetricDef("ttfot", "TTFOT", "ms", "request", "first_output - sent",
        "Time to the first event with non-empty `content` (or `text`): what a user sees.",
        "GuideLLM's name. Equal to TTFT except for reasoning models, where it includes thinking.",
        "ttfot_ms", "llmload_time_to_first_output_token_seconds", digits=1,
        sample=lambda r, m: m.ttfot, goodput=True, help="Time to the first content event."),
    MetricDef("connect", "connect time", "ms", "request", "connected - connect_start",
        "Opening a new connection, TLS included; absent when a keep-alive connection was reused.",
        "Reported on its own, never hidden inside TTFT.",
        "connect_ms", None, label="connect", sample=lambda r, m: derive.connect_ns(r)),
    MetricDef("queue", "client queue time", "ms", "request", "sent - scheduled",
        "How late the client sent a request its load model had scheduled (open-loop modes); "
        "the guard against coordinated omission. Zero in closed-loop modes.",
        "vLLM's client added the same measure after issue #54101.",
        "queue_ms", "llmload_client_queue_seconds", label="client queue",
        sample=lambda r, m: derive.queue_ns(r), help="How late the client sent a scheduled request."),
    MetricDef("e2e", "E2E latency", "ms", "request", "done - sent",
        "From the first byte of the request written to `[DONE]` or the end of the body.",
        "Tools that start the clock before connecting fold connection setup in; llmload reports "
        "it apart, as connect time.",
        "e2e_ms", "llmload_e2e_request_latency_seconds", label="E2E", digits=0,
        sample=lambda r, m: m.e2e, goodput=True, help="End-to-end request latency."),
    MetricDef("e2e_scheduled", "E2E from schedule", "ms", "request", "done - scheduled",
        "E2E latency as the load model experienced it: client queueing included.",
        "Open-loop tools that report only `done - sent` hide a client that fell behind.",
        "e2e_scheduled_ms", None, digits=0, sample=lambda r, m: derive.gap(r.scheduled_ns, r.done_ns)),
    MetricDef("output_tokens", "output tokens N", "tokens", "request",
        "usage.completion_tokens, else estimated",
        "The server's own count when it sends one (asked for with "
        "`stream_options.include_usage`); otherwise estimated (see token counts), and the "
        "summary says which.",
        "SGLang's client falls back to the *requested* length; llmload never does.",
        "output_tokens_per_request", "llmload_request_generation_tokens",
        sample=lambda r, m: r.output_tokens, help="Output tokens per request."),
    MetricDef("prompt_tokens", "prompt tokens", "tokens", "request", "usage.prompt_tokens",
        "The server's count of the prompt, shown beside the requested prompt length "
        "(`prompt_tokens_counted_vs_requested`; a warning beyond 2%).",
        "Chat templates add tokens, so it exceeds a length asked in words; `--tokenize` (by "
        "default, where the server has `/tokenize`) asks in the server's tokens.",
        "prompt_tokens_per_request", "llmload_request_prompt_tokens",
        sample=lambda r, m: r.prompt_tokens, help="Prompt tokens per request (usage)."),
    MetricDef("tpot", "TPOT", "ms", "request", "(last_token - first_token) / (N - 1), N ≥ 2",
        "Mean time per output token after the first, of one request.",
        "GuideLLM and AIPerf call this ITL.",
        "tpot_ms", "llmload_request_time_per_output_token_seconds",
        sample=lambda r, m: None if m.tpot is None else round(m.tpot), goodput=True,
        help="Per-request time per output token."),
    MetricDef("decode_speed", "decode speed", "tok/s", "request",
        "(N - 1) / (last_token - first_token)",
        "Per-stream decode rate, the inverse of TPOT; the stage reports it from TPOT's median.",
        "llmperf's per-request output throughput divides N by E2E latency, prefill included.",
        "headline.levels[].decode_tok_per_s", None),
    MetricDef("finish_reason", "finish reason", "requests", "request", "count per value",
        "How requests ended: `stop`, `length`, `tool_calls`, ... . Under `ignore_eos` all should "
        "be `length`; the stage warns when its output tokens fall below 0.98 of the max_tokens "
        "asked there (`output_tokens_vs_max_tokens`).",
        "Rarely reported by benchmark clients; without it a server that ignores `ignore_eos` "
        "goes unnoticed.",
        "finish_reasons", None),
    MetricDef("reasoning_tokens", "reasoning tokens R", "tokens", "request",
        "usage.completion_tokens_details.reasoning_tokens, else the reasoning events' tokens",
        "Output tokens a reasoning model spent thinking (`reasoning_content` or `reasoning` "
        "deltas), part of N; the answer is A = N - R. Without the server's count: the tokens "
        "of the reasoning events, exact under continuous usage, their share of the final usage "
        "otherwise.",
        "Most clients count thinking as output and cannot say how much of a run's tok/s the "
        "user never reads.",
        "reasoning.reasoning_tokens_per_request", None),
    MetricDef("think", "thinking time", "ms", "request", "first_output - first_token",
        "TTFOT - TTFT of one request: how long it thought before its first answer token.",
        "GuideLLM reports TTFT and TTFOT apart but not their difference per request.",
        "reasoning.think_ms", None),
    MetricDef("tpot_reasoning", "TPOT reasoning", "ms", "request",
        "(first_output - first_token) / R, R ≥ 1",
        "Time per thinking token: from the first thinking token to the first answer token is "
        "R decode steps when one token comes per step.",
        "No peer splits TPOT by phase.",
        "reasoning.tpot_reasoning_ms", None),
    MetricDef("tpot_answer", "TPOT answer", "ms", "request",
        "(last_token - first_output) / (A - 1), A ≥ 2",
        "TPOT of the answer alone: what a reader of the answer sees.",
        "No peer splits TPOT by phase.",
        "reasoning.tpot_answer_ms", None),
    MetricDef("outcome", "outcome", "requests", "request", "ok, unfinished or an ErrorKind",
        "Every request ends as `ok`, `unfinished` (still running after the drain) or one "
        "error kind. A failed request never enters a latency histogram.",
        "Clients that count only successes, or drop streams killed at shutdown, bias latency "
        "towards short requests.",
        "requests", "llmload_requests_total"),
    # -- per token ------------------------------------------------------------------------
    MetricDef("itl", "ITL (per token)", "ms", "token",
        "(t_read - t_previous_token_read) / tokens of the read, once per token",
        "For each token-bearing read after the first, the gap to the previous token-bearing "
        "read, split evenly over the tokens that read completed: one sample per token.",
        "vLLM's and SGLang's OpenAI clients record the raw gap between events, which "
        "speculative decoding inflates (several tokens per event).",
        "itl_ms", "llmload_inter_token_latency_seconds", label="ITL",
        help="Inter-token latency, one sample per token."),
    MetricDef("tokens_per_event", "tokens per event", "tokens", "token",
        "tokens carried by each token-bearing event after the first",
        "A property of the server: above 1 under speculative decoding (EAGLE-3, MTP) or when "
        "the server coalesces writes.",
        "Few clients measure it; it explains ITL differences between tools.",
        "tokens_per_event", "llmload_tokens_per_event",
        help="Tokens of each token-bearing event but the first."),
    # -- per read -------------------------------------------------------------------------
    MetricDef("chunk_gap", "chunk gap", "ms", "read", "t_read - t_previous_token_read",
        "The raw gap between consecutive token-bearing reads, not divided by tokens.",
        "AIPerf's inter-chunk latency (ICL); what vLLM's client calls ITL.",
        "chunk_gap_ms", "llmload_chunk_gap_seconds", help="Raw gap between token-bearing reads."),
    MetricDef("events_per_read", "events per read", "events", "read",
        "token-bearing events completed by one read",
        "A property of the client: above 1 means the client read late and several events "
        "queued in the socket. Part of client health.",
        "Not reported by other tools, which therefore cannot tell a late client from a "
        "coalescing server.",
        "events_per_read", "llmload_client_events_per_read"),
    # -- per stage ------------------------------------------------------------------------
    MetricDef("reasoning_share", "reasoning share", "ratio", "stage",
        "reasoning tokens / output tokens, of the window's ok requests",
        "How much of the output a reasoning model spent thinking; output throughput counts "
        "both, so answer tok/s is output tok/s times (1 - share).",
        "Peers report one output tok/s that mixes thinking and answer.",
        "reasoning.reasoning_share", None),
    MetricDef("output_throughput", "output throughput", "tok/s", "stage",
        "tokens whose read fell in [t0, t1] / (t1 - t0)",
        "Tokens inside the measured window, from every request including those that straddle "
        "its edges; nothing counted twice.",
        "vLLM's client divides all output tokens by the whole run, ramp-up and tail included.",
        "output_tok_per_s", "llmload_generation_tokens_total"),
    MetricDef("input_throughput", "input throughput", "tok/s", "stage",
        "prompt tokens of requests sent in [t0, t1] / (t1 - t0)",
        "Prefill load offered to the server during the window.",
        "vLLM's client divides by the whole run.",
        "input_tok_per_s", "llmload_prompt_tokens_total"),
    MetricDef("total_throughput", "total throughput", "tok/s", "stage",
        "input throughput + output throughput", "Prompt and output tokens together.",
        "Same as vLLM's total token throughput, but over the window.",
        "total_tok_per_s", None),
    MetricDef("request_throughput", "request throughput", "req/s", "stage",
        "requests completed in [t0, t1] / (t1 - t0)",
        "Requests whose end (`[DONE]`, end of body, or failure) fell inside the window; "
        "`unfinished` ones never completed.",
        "vLLM's client divides completed requests by the whole run.",
        "request_per_s", "llmload_requests_total"),
    MetricDef("goodput", "goodput", "req/s", "stage",
        "requests sent in [t0, t1] meeting every SLO / (t1 - t0)",
        "Throughput that counts only requests meeting every service-level objective.",
        "vLLM's `--goodput` uses the same idea (from DistServe) over the whole run.",
        "goodput_req_per_s", None),
    MetricDef("single_stream", "single-stream tok/s", "tok/s", "stage",
        "output throughput at concurrency 1",
        "The best case one user sees; the first number of a sweep.",
        "Some reports quote decode speed instead, which excludes prefill.",
        "headline.single_stream_tok_per_s", None),
    MetricDef("peak_throughput", "peak throughput", "tok/s", "stage",
        "max over stages of output throughput, with its concurrency",
        "The highest stage output throughput of a sweep, reported with its concurrency.",
        "A single run at one concurrency says nothing about the peak.",
        "headline.peak_tok_per_s", None),
    MetricDef("error_rate", "error rate", "ratio", "stage", "failed / attempted, by ErrorKind",
        "Failed requests over all requests sent in the window; `errors` breaks it down by kind.",
        "Many clients raise or log on error and report latency of the rest only.",
        "error_rate", "llmload_requests_total"),
    MetricDef("loop_lag", "client loop lag", "ms", "stage", "actual - due wake-up of a timer",
        "How late the worker's event loop runs a timer set at random (Poisson, mean 20 ms) "
        "times, so that no periodic load is sampled at one phase: time the client was too busy "
        "to stamp reads. p99 above 5 ms flags the stage client-bound.",
        "No peer measures its own lag; vLLM's client added +23 ms TTFT at 100 streams unseen.",
        "client_health.loop_lag_p99_ms", "llmload_client_loop_lag_p99_seconds"),
    MetricDef("client_cpu", "client CPU", "%", "stage", "process CPU time / wall time",
        "CPU the worker used, in percent of one core; above 80% flags the stage client-bound.",
        "No peer reports it.",
        "client_health.cpu_percent", "llmload_client_cpu_ratio"),
    MetricDef("client_events", "client events parsed", "events/s", "stage",
        "events parsed / wall time, per second",
        "Events the worker decoded per second: with CPU, how close it runs to its ceiling.",
        "No peer reports it.",
        "client_health.events_per_s", None),
)  # fmt: skip


_BY_KEY = {metric.key: metric for metric in CATALOG}


def by_key(key: str) -> MetricDef:
    """The definition of ``key``; KeyError names the known keys."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r}; known: {', '.join(_BY_KEY)}") from None


def prometheus_name(key: str) -> str:
    """The series ``key`` is exported as; KeyError where the catalog gives it none."""
    name = by_key(key).prometheus
    if name is None:
        raise KeyError(f"metric {key!r} has no Prometheus series in the catalog")
    return name


# The metrics with one value per request, each with how it is read, and those of them goodput
# judges each request by.
PER_REQUEST: tuple[tuple[str, Sample], ...] = tuple(
    (m.key, m.sample) for m in CATALOG if m.sample is not None
)
GOODPUT: tuple[tuple[str, Sample], ...] = tuple(
    (m.key, m.sample) for m in CATALOG if m.sample is not None and m.goodput
)

# A stage latency has a histogram in the aggregation and a ``<key>_ms`` field of its own in
# each stage of summary.json, and --slo may name it; the reasoning phases and the loop lag are
# milliseconds too, but inside objects of their own.
LATENCY_KEYS: tuple[str, ...] = tuple(
    m.key for m in CATALOG if m.unit == "ms" and m.summary_key == f"{m.key}_ms"
)
# Where the stage latencies are shown, in the order shown (summary.json has every one):
# the console's latency table (E2E from schedule equals E2E in closed loop, so it stays out);
CONSOLE_LATENCIES = ("ttft", "ttfot", "itl", "tpot", "e2e", "chunk_gap", "connect", "queue")
# p50/p90/p99 columns of stages.csv, so of the report's and the web UI's stage tables;
TABLE_LATENCIES = ("ttft", "itl", "tpot", "e2e")
# a p50/p99 plot of the report each, and the rows of ``llmload compare`` at chosen levels;
PLOTTED_LATENCIES = ("ttft", "itl", "tpot")
# a distribution chart of the report each (latency by percentile, one curve per stage).
DISTRIBUTED_LATENCIES = TABLE_LATENCIES

# ``<metric>_<stat>_ms``: a statistic of a stage latency, as stages.csv and --slo name it. The
# metric is matched lazily so that ``e2e_scheduled_p99_ms`` splits after ``e2e_scheduled``.
_LATENCY_STAT = re.compile(r"^(?P<metric>[a-z0-9_]+?)_(?P<stat>p\d{2,4}|mean|min|max)_ms$")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: the field of a row it shows, its header and its decimals."""

    key: str
    header: str
    digits: int = 0


def stat_header(metric: str, stat: str) -> str:
    """``"TTFT p99"``: a statistic of a metric, as a header or a plot's legend names it."""
    return f"{by_key(metric).short} {stat}"


def latency_column(metric: str, stat: str, unit: str = "") -> Column:
    """The ``<metric>_<stat>_ms`` column of a stage row; ``unit=" ms"`` where the table has no
    note saying that latencies are milliseconds."""
    return Column(f"{metric}_{stat}_ms", stat_header(metric, stat) + unit, by_key(metric).digits)


def latency_stat(column: str) -> tuple[str, str] | None:
    """``"ttft_p99_ms"`` -> ``("ttft", "p99")``; None for a column of another shape. The metric
    is not checked: ``--slo`` names the unknown one in its own error."""
    found = _LATENCY_STAT.match(column)
    return None if found is None else (found["metric"], found["stat"])
