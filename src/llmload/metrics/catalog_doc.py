"""``docs/metrics.md``: the catalog's metrics (``llmload.metrics.catalog``) with the words,
timestamps and sections around them; ``python -m llmload.metrics.catalog_doc > docs/metrics.md``
writes it (``make docs``), and a test fails when the two drift."""

from __future__ import annotations

from collections.abc import Iterable

from llmload.metrics.catalog import CATALOG, Scope

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
        "<!-- Generated from src/llmload/metrics/catalog.py and catalog_doc.py by `make docs`; "
        "do not edit. -->",
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
