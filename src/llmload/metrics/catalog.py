"""Every metric llmload reports, defined once: unit, formula, meaning, and how peers differ.

Benchmark tools disagree on what TTFT, ITL and TPOT mean, so their numbers do not compare. This
catalog is the single definition: ``docs/metrics.md`` is generated from it
(``python -m llmload.metrics.catalog > docs/metrics.md``) and a test fails when the two drift.
Keys are the ones the aggregation uses for its histograms; ``summary_key`` is the field of a
stage in ``summary.json`` (a dotted path where nested, ``headline.`` for run-level values).

The code reads it too: the stage latencies (``LATENCY_KEYS``), their names in headers and the
columns that show them (``latency_column``) come from here, so the console, ``stages.csv``, the
report, the web UI's tab and the Prometheus families cannot name a metric differently, and a new
latency is one entry here plus the code that measures it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Unit = Literal["ms", "tok/s", "tokens", "events", "ratio", "req/s", "requests", "%", "events/s"]
Scope = Literal["request", "token", "read", "stage"]


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

    @property
    def short(self) -> str:
        return self.label or self.title


CATALOG: tuple[MetricDef, ...] = (
    # -- per request ------------------------------------------------------------------------
    MetricDef("ttft", "TTFT", "ms", "request", "first_token - sent",
        "Time to the first token-bearing event: reasoning text and tool-call fragments count.",
        "vLLM's client stops its clock at the first event with a non-empty `choices` list, even "
        "a role-only or empty delta, so it reads lower.",
        "ttft_ms", "llmload_time_to_first_token_seconds", digits=1),
    MetricDef("ttfot", "TTFOT", "ms", "request", "first_output - sent",
        "Time to the first event with non-empty `content` (or `text`): what a user sees.",
        "GuideLLM's name. Equal to TTFT except for reasoning models, where it includes thinking.",
        "ttfot_ms", "llmload_time_to_first_output_token_seconds", digits=1),
    MetricDef("connect", "connect time", "ms", "request", "connected - connect_start",
        "Opening a new connection, TLS included; absent when a keep-alive connection was reused.",
        "Reported on its own, never hidden inside TTFT.",
        "connect_ms", None, label="connect"),
    MetricDef("queue", "client queue time", "ms", "request", "sent - scheduled",
        "How late the client sent a request its load model had scheduled (open-loop modes); "
        "the guard against coordinated omission. Zero in closed-loop modes.",
        "vLLM's client added the same measure after issue #54101.",
        "queue_ms", "llmload_client_queue_seconds", label="client queue"),
    MetricDef("e2e", "E2E latency", "ms", "request", "done - sent",
        "From the first byte of the request written to `[DONE]` or the end of the body.",
        "Tools that start the clock before connecting fold connection setup in; llmload reports "
        "it apart, as connect time.",
        "e2e_ms", "llmload_e2e_request_latency_seconds", label="E2E", digits=0),
    MetricDef("e2e_scheduled", "E2E from schedule", "ms", "request", "done - scheduled",
        "E2E latency as the load model experienced it: client queueing included.",
        "Open-loop tools that report only `done - sent` hide a client that fell behind.",
        "e2e_scheduled_ms", None, digits=0),
    MetricDef("output_tokens", "output tokens N", "tokens", "request",
        "usage.completion_tokens, else estimated",
        "The server's own count when it sends one (asked for with "
        "`stream_options.include_usage`); otherwise estimated (see token counts), and the "
        "summary says which.",
        "SGLang's client falls back to the *requested* length; llmload never does.",
        "output_tokens_per_request", "llmload_request_generation_tokens"),
    MetricDef("prompt_tokens", "prompt tokens", "tokens", "request", "usage.prompt_tokens",
        "The server's count of the prompt, shown beside the requested prompt length "
        "(`prompt_tokens_counted_vs_requested`; a warning beyond 2%).",
        "Chat templates add tokens, so it exceeds a length asked in words; `--tokenize` (by "
        "default, where the server has `/tokenize`) asks in the server's tokens.",
        "prompt_tokens_per_request", "llmload_request_prompt_tokens"),
    MetricDef("tpot", "TPOT", "ms", "request", "(last_token - first_token) / (N - 1), N ≥ 2",
        "Mean time per output token after the first, of one request.",
        "GuideLLM and AIPerf call this ITL.",
        "tpot_ms", "llmload_request_time_per_output_token_seconds"),
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
        "itl_ms", "llmload_inter_token_latency_seconds", label="ITL"),
    MetricDef("tokens_per_event", "tokens per event", "tokens", "token",
        "tokens carried by each token-bearing event after the first",
        "A property of the server: above 1 under speculative decoding (EAGLE-3, MTP) or when "
        "the server coalesces writes.",
        "Few clients measure it; it explains ITL differences between tools.",
        "tokens_per_event", "llmload_tokens_per_event"),
    # -- per read -------------------------------------------------------------------------
    MetricDef("chunk_gap", "chunk gap", "ms", "read", "t_read - t_previous_token_read",
        "The raw gap between consecutive token-bearing reads, not divided by tokens.",
        "AIPerf's inter-chunk latency (ICL); what vLLM's client calls ITL.",
        "chunk_gap_ms", "llmload_chunk_gap_seconds"),
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


_WORDS = (
    ("event", "one SSE event: one `chat.completion.chunk` (or completion chunk)."),
    ("token-bearing event", "an event whose delta carries non-empty `content`, "
     "`reasoning_content`/`reasoning`, or a tool-call fragment (`text` for /v1/completions). "
     "Role-only, empty and usage-only events are not. Every metric uses this one predicate."),
    ("read", "one socket read that completed at least one event, stamped with "
     "`perf_counter_ns()` right after it returned. One read can complete several events."),
    ("tokens of an event", "see *Token counts* below; never the requested `max_tokens`."),
)  # fmt: skip

_TIMESTAMPS = (
    ("scheduled", "when the load model wanted the request sent (open-loop); else = `sent`"),
    ("began", "the request handed to the transport"),
    ("connect_start, connected", "a new connection opened for it (absent on keep-alive reuse)"),
    ("tls_start", "its TLS handshake began (absent without TLS)"),
    ("sent", "the request about to be written to the socket"),
    ("written", "its last byte handed to the socket"),
    ("first_byte", "the read that brought the first response byte"),
    ("headers", "status line and headers parsed"),
    ("first_token", "the read that completed the first token-bearing event"),
    ("first_output", "the read that completed the first event with non-empty `content`"),
    ("last_token", "the read that completed the last token-bearing event"),
    ("done", "`[DONE]` or end of body"),
)

_SCOPES: tuple[tuple[Scope, str, str], ...] = (
    ("request", "Per request", "One value per request; latency histograms hold `ok` requests."),
    ("token", "Per token", "One sample per token (ITL) or per token-bearing event."),
    ("read", "Per read", "One sample per token-bearing socket read."),
    ("stage", "Per stage", "A plain run is one stage; a sweep has one per level. A stage has "
     "a warm-up (by default at least as many requests as the concurrency, and/or a set "
     "duration) excluded from its numbers, a measured window [t0, t1] (a time, or until "
     "`--requests` were sent in it: a sample of the same size on a fast and a slow machine; "
     "its rates are then over a short window, and noisier) and a bounded drain; all "
     "workers take the phase boundaries from the master's announcement (stage, phase, master "
     "wall-clock time), not from their own clocks. Latencies count "
     "requests *sent* inside [t0, t1]; after t1 the load continues until they finish (bounded "
     "drain), and those still running are counted `unfinished`, with no latency invented. "
     "Warm-up requests stay in `requests.jsonl`, tagged with their phase."),
)  # fmt: skip

_SECTIONS = (
    ("Percentiles", "p50, p90, p95, p99, p99.9, min, max and mean. A percentile is the "
     "*nearest rank*: the smallest sample with at least ⌈q·n⌉ samples at or below it (the lower "
     "sample at a tie), never an interpolation between samples (numpy's default, used by vLLM's "
     "and SGLang's clients). They come from mergeable log-bucket histograms (relative error ≤ 1%, "
     "a zero bucket, exact count, sum, min and max), so merging workers is exact to one bucket "
     "width and any quantile can be recomputed from `histograms.json`."),
    ("Token counts", "The tokens of each event come, in order of preference, from: "
     "`continuous_usage` — a cumulative usage on every event (vLLM `continuous_usage_stats`), "
     "exact per event; `usage` — the final `usage.completion_tokens` spread evenly over the "
     "token-bearing events; `estimated` — one token per token-bearing event when the server "
     "sends no usage. The summary's `token_source` says which (or `mixed`). The requested "
     "`max_tokens` is never used as a count."),
    ("Reasoning models", "A reasoning model streams its thinking as `reasoning_content` (or "
     "`reasoning`) deltas before the answer's `content`. Both are token-bearing, so TTFT is the "
     "first thinking token and TTFOT the first answer token; each record (`requests.jsonl`) "
     "carries `reasoning_tokens` and `answer_tokens`, and each stage of `summary.json` a "
     "`reasoning` object (null when nothing reasoned): the tokens of both phases, "
     "`reasoning_share`, thinking time and TPOT per phase. The console prints a `reasoning` line "
     "and the report a Reasoning table when any request reasoned. Counting costs the recorder one "
     "branch per event. `bench/hot_path_ab.py --before 18d93ca` (this wave's start against its "
     "end, `bench/results/issue19_hot_path_ab.json`) gave 3.48 against 4.01 µs per recorded "
     "event, best of 3 rounds, on a machine whose rounds spread from 3.5 to 6.7 µs; five more "
     "paired runs gave ratios from 0.91 to 1.14, so no change is resolved at this machine's "
     "noise. Against the "
     "simulator, which thinks `--reasoning-tokens N` tokens per chat answer:\n\n"
     "```sh\n"
     "llmload sim --port 8123 --reasoning-tokens 192 &\n"
     "locust -f locustfiles/chat.py --headless -u 8 -r 8 -t 20s --host http://127.0.0.1:8123 \\\n"
     "    --max-tokens 256 --ignore-eos\n"
     "```\n\n"
     "measured (vllm profile, 8 users, 24 requests in the window): `reasoning (24 requests): "
     "4,608 reasoning + 1,536 answer tokens (75.0% reasoning) · thinking (TTFOT - TTFT) p50 "
     "3,085.51 ms · TPOT reasoning 15.96 / answer 15.94 ms`, TTFT p50 45.5 ms, TTFOT p50 "
     "3,109 ms: 192 thinking tokens at the profile's 16.07 ms step. "
     "`tests/e2e/test_reasoning.py` holds every record's two counts to the simulator's ground "
     "truth exactly and its thinking time to the simulator's, joined by X-Request-Id."),
    ("Every API the same way", "chat, the Responses API (`--api responses`, `/v1/responses`) "
     "and Anthropic's Messages API (`--api messages`, `/v1/messages`) are measured by the same "
     "definitions; only which event is token-bearing, and where usage lives, differ "
     "(`protocol/api_events.py`). Responses: TTFT at the first `response.output_text.delta`, "
     "`response.refusal.delta`, `response.reasoning_text.delta`, "
     "`response.reasoning_summary_text.delta` or `response.function_call_arguments.delta` with "
     "text; TTFOT at the first `output_text` (or refusal) delta; reasoning tokens from "
     "`usage.output_tokens_details.reasoning_tokens`; usage (`input_tokens`, `output_tokens`, "
     "`input_tokens_details.cached_tokens`) from `response.completed` or `response.incomplete`, "
     "whose `status` and `incomplete_details.reason` give the finish (`stop`, `tool_calls`, "
     "`length`). Messages: TTFT at the first `content_block_delta` of type `text_delta`, "
     "`thinking_delta` or `input_json_delta`; TTFOT at the first `text_delta`; the prompt from "
     "`message_start`'s usage (`input_tokens` + `cache_read_input_tokens` + "
     "`cache_creation_input_tokens`, Anthropic counting the cached part apart), output tokens "
     "from `message_delta`'s `usage.output_tokens`, the finish from its `stop_reason` "
     "(`end_turn` is `stop`, `max_tokens` `length`, `tool_use` `tool_calls`). Neither sends "
     "usage per event, so a stream's tokens are its final count spread over its token-bearing "
     "events (`token_source` `usage`), and reasoning tokens are counted per thinking event; a "
     "whole Messages answer, which counts no thinking apart, has none. Errors are each API's "
     "own shape (an `error` event, `response.failed`), counted as `error_event`. Embeddings "
     "and rerank (`/v1/rerank`) send no tokens back: their latency is E2E and their input "
     "tokens the server's usage (`prompt_tokens`, else a rerank's `total_tokens`)."),
    ("HTTP phases", "Each stage's `http_phases` splits the successful requests' time before "
     "the first token: `pool_wait` (began to the connection in hand: a pool's queue, and the "
     "client's own work before the send), `tcp_connect` (connect_start to tls_start, or to "
     "connected without TLS; a name lookup is inside it) and `tls` (tls_start to connected), "
     "both absent on a kept-alive connection and outside TTFT, then `request_write` (sent to "
     "written), `first_byte` (written to first_byte: the server, or a gateway before it, "
     "answering) and `first_token` (first_byte to first_token: for a server that sends its "
     "head at once, the queue and the prefill). The last three add up to TTFT exactly. "
     "`new_connections` counts the requests that opened one; when at least half did and "
     "opening it cost at least a tenth of the TTFT p50, the stage warns (a client without "
     "keep-alive, or a server or gateway closing connections). httpx reports the same phases "
     "except the first byte, which it sees only with the whole head."),
    ("The server's own account", "A server may say what it did for each request, and "
     "llmload joins that to the client's record of the same request (`server_timings`, "
     "`server_metrics` in `requests.jsonl`; per stage in `summary.json`). llama.cpp sends "
     "`timings` on every answer: its prefill (`prompt_ms`, no slot wait in it) and decode "
     "(`predicted_ms`). vLLM started with `--enable-per-request-metrics` sends `metrics` "
     "beside the final usage: `time_to_first_token_ms` (from the request's first scheduling "
     "into a batch to its first token: no queue in it), `queue_time_ms` (queued to first "
     "scheduled), `generation_time_ms` (first to last token) and `mean_itl_ms`. The stage's "
     "`server_metrics` gives the queue, the queue's share of the client's TTFT (summed over "
     "the window), `ttft_outside_engine_ms` (client TTFT - queue - engine TTFT: HTTP, "
     "tokenization, the network, the client) and client TPOT - mean ITL, per request. "
     "`--server-timings auto` (the default) asks for them (`include_metrics`) when the target's "
     "`/v1/models` says vLLM serves it; a run that asked and got none says so once. The "
     "prefix cache's share comes from `usage.prompt_tokens_details.cached_tokens` per request "
     "(`prompt_cache_hit_rate`), wherever a server sends it."),
    ("Client health: the client-bound rule", "Each worker measures its own event-loop lag, CPU "
     "use, events parsed per second and events per read, and ships them with its histograms. A "
     "stage is flagged `client-bound` in every output when any worker's loop-lag p99 exceeded "
     "5 ms or its CPU exceeded 80% of one core over the stage. The limits are provisional: the "
     "performance benchmark tunes them so that the flag is raised whenever the timing error is "
     "at least twice its bound and never when it is at most half of it. A client-bound number "
     "measured the load generator, not the server: do not publish it."),
)  # fmt: skip


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _scope_table(scope: Scope) -> list[str]:
    rows = (
        (f"**{m.title}** `{m.key}`", m.unit, f"`{m.formula}`", m.definition, m.peers,
         f"`{m.summary_key}`", f"`{m.prometheus}`" if m.prometheus else "—")
        for m in CATALOG if m.scope == scope
    )  # fmt: skip
    header = ("metric", "unit", "formula", "definition", "peers", "summary.json", "Prometheus")
    return _table(header, rows)


def render_markdown() -> str:
    """The text of ``docs/metrics.md``."""
    out = [
        "# What llmload measures, exactly",
        "",
        "<!-- Generated from src/llmload/metrics/catalog.py by `make docs`; do not edit. -->",
        "",
        "Benchmark tools disagree on what ITL and TPOT mean, on when the first token arrived "
        "and on how tokens are counted, so their numbers do not compare. llmload defines each "
        "metric once, in code, and names the peer's definition where it differs. All "
        "timestamps are `perf_counter_ns()` of the measuring process; durations are reported "
        "in milliseconds.",
        "",
        "## Words",
        "",
        *(f"- **{word}**: {text}" for word, text in _WORDS),
        "",
        "## Timestamps of one request",
        "",
        *_table(("name", "moment"), ((f"`{n}`", m) for n, m in _TIMESTAMPS)),
    ]
    for scope, title, intro in _SCOPES:
        out += ["", f"## {title}", "", intro, "", *_scope_table(scope)]
    for title, text in _SECTIONS:
        out += ["", f"## {title}", "", text]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
