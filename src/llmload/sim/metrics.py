"""``GET /metrics``: a Prometheus text exposition with vLLM's metric names.

Hand-written rather than through prometheus_client: the state already lives in ``Truth`` as plain
counters, and a scrape is a few lines of formatting. Names and labels follow vLLM
(``model_name``), so a client's server-side scraping can be tested against the simulator.

Every profile renders vLLM's names. The prefix cache is exported as its engine does: vLLM V1's
counters ``vllm:prefix_cache_queries_total`` and ``vllm:prefix_cache_hits_total`` (tokens) for
``vllm`` profiles, SGLang's gauge ``sglang:cache_hit_rate`` (the hit ratio of the latest prefill
batch, see ``prefix_cache.PrefixCacheStats``) for ``sglang`` ones.
"""

from __future__ import annotations

from llmload.sim.prefix_cache import PrefixCacheStats
from llmload.sim.truth import TTFT_BUCKETS_S, Truth


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _ttft(lines: list[str], truth: Truth, labels: str) -> None:
    name = "vllm:time_to_first_token_seconds"
    lines.append(f"# HELP {name} Histogram of time to first token in seconds.")
    lines.append(f"# TYPE {name} histogram")
    cumulative = 0
    for bound, count in zip(TTFT_BUCKETS_S, truth.ttft_buckets, strict=False):
        cumulative += count
        lines.append(f'{name}_bucket{{{labels},le="{bound!r}"}} {float(cumulative)!r}')
    total = sum(truth.ttft_buckets)
    lines.append(f'{name}_bucket{{{labels},le="+Inf"}} {float(total)!r}')
    lines.append(f"{name}_count{{{labels}}} {float(total)!r}")
    lines.append(f"{name}_sum{{{labels}}} {truth.ttft_sum_ns / 1e9!r}")


def _sglang_cache(lines: list[str], cache: PrefixCacheStats, model: str) -> None:
    # SGLang labels its scheduler gauges by model name, without vLLM's engine index.
    name = "sglang:cache_hit_rate"
    lines += [f"# HELP {name} The prefix cache hit rate.", f"# TYPE {name} gauge"]
    lines.append(f'{name}{{model_name="{_escape(model)}"}} {cache.batch_hit_rate!r}')


def render_metrics(
    truth: Truth,
    *,
    model: str,
    running: int,
    waiting: int,
    kv_usage: float,
    speculative: bool,
    engine: str,
    cache: PrefixCacheStats,
) -> bytes:
    labels = f'engine="0",model_name="{_escape(model)}"'
    rows: list[tuple[str, str, str, float]] = [
        ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", running),
        ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting),
        ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv_usage),
        ("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
         truth.prompt_tokens_total),
        ("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
         truth.tokens_written_total),
        ("vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.",
         truth.preemptions_total),
    ]  # fmt: skip
    if speculative:
        rows += [
            ("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.",
             truth.drafts_total),
            ("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.",
             truth.draft_tokens_total),
            ("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.",
             truth.accepted_tokens_total),
        ]  # fmt: skip
    if engine == "vllm":
        rows += [
            ("vllm:prefix_cache_queries_total", "counter",
             "Prefix cache queries, in terms of number of queried tokens.", cache.queries),
            ("vllm:prefix_cache_hits_total", "counter",
             "Prefix cache hits, in terms of number of cached tokens.", cache.hits),
        ]  # fmt: skip
    lines: list[str] = []
    for name, kind, help_text, value in rows:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.append(f"{name}{{{labels}}} {float(value)!r}")
    if engine == "sglang":
        _sglang_cache(lines, cache, model)
    _ttft(lines, truth, labels)
    return ("\n".join(lines) + "\n").encode()
