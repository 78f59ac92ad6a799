"""Server-side metrics: scrape the target's ``/metrics`` and report deltas beside the client's.

Names are matched tolerantly, because the same quantity has had several names:

- the engine prefix is ignored (``vllm:``, ``sglang:``, ``llamacpp:``);
- llama.cpp's names stand for the same quantities: ``tokens_predicted`` for generated tokens,
  ``requests_processing`` / ``requests_deferred`` for running and waiting, and its own
  ``prompt_seconds`` / ``tokens_predicted_seconds`` (time spent on prompts and on generation)
  are reported beside them;
- counters match with or without ``_total``; ``*_created`` samples (timestamps) are ignored;
- old names are aliases of new ones, the new name winning when a server exports both (vLLM 0.10
  exports both while deprecating): ``gpu_cache_usage_perc`` -> ``kv_cache_usage_perc``,
  ``time_per_output_token_seconds`` -> ``inter_token_latency_seconds``; SGLang's
  ``num_running_reqs``/``num_queue_reqs``/``token_usage`` stand for vLLM's running, waiting and
  KV-cache usage;
- every label set (``model_name``, ``engine`` of a data-parallel server) is summed; fractions
  (KV-cache usage, accept length) are averaged instead, since summing two 60 % pools is no 120 %.

Prefix cache, in tokens: vLLM V1 counts ``prefix_cache_queries`` (prompt tokens looked up) and
``prefix_cache_hits`` (found cached), 0.10 also under the deprecated ``gpu_prefix_cache_*``; the
stage's hit rate is hits / queries over the stage. Servers without the counters export a gauge:
vLLM V0's ``gpu_prefix_cache_hit_rate`` (cumulative since start, -1 with caching off, so negative
values are ignored) and SGLang's ``cache_hit_rate`` (the hit ratio of its latest prefill batch,
set back to 0 by its decode logs); the stage's hit rate is then the gauge's mean over the scrapes,
a rougher figure.

Speculative decoding, as vLLM defines it (``vllm/v1/spec_decode/metrics.py``): acceptance rate =
accepted tokens / draft tokens; mean acceptance length = 1 + accepted tokens / drafts (the 1 is the
token the target model always contributes per step). SGLang exports its accept length as a gauge,
reported as its mean over the scrapes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType

import httpx

from llmload.protocol.jsonvalue import JSON
from llmload.target.fingerprint import auth_headers, base_url
from llmload.target.promtext import Sample, parse

_PREFIXES = ("vllm", "sglang", "llamacpp")
# Every table maps a reported key to candidate base names, the current name first.
_COUNTERS: dict[str, tuple[str, ...]] = {
    "generation_tokens": ("generation_tokens", "tokens_predicted"),  # llama.cpp: tokens_predicted
    "prompt_tokens": ("prompt_tokens",),
    # llama.cpp: the server's own seconds of prompt evaluation and of generation
    "prompt_seconds": ("prompt_seconds",),
    "cached_prompt_tokens": ("prompt_tokens_cached",),  # llama.cpp: prompt tokens it reused
    "generation_seconds": ("tokens_predicted_seconds",),
    "preemptions": ("num_preemptions",),
    "spec_drafts": ("spec_decode_num_drafts",),
    "spec_draft_tokens": ("spec_decode_num_draft_tokens",),
    "spec_accepted_tokens": ("spec_decode_num_accepted_tokens",),
    "prefix_cache_queries": ("prefix_cache_queries", "gpu_prefix_cache_queries"),
    "prefix_cache_hits": ("prefix_cache_hits", "gpu_prefix_cache_hits"),
}
# Gauges also say how label sets combine: counts add up, fractions are averaged, and a rate is
# a fraction whose negative values mean "not measured" (vLLM V0's -1 with prefix caching off).
_GAUGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "running": ("sum", ("num_requests_running", "num_running_reqs", "requests_processing")),
    "waiting": ("sum", ("num_requests_waiting", "num_queue_reqs", "requests_deferred")),
    "kv_cache_usage": (
        "mean",
        ("kv_cache_usage_perc", "gpu_cache_usage_perc", "token_usage", "kv_cache_usage_ratio"),
    ),
    "spec_accept_length": ("mean", ("spec_accept_length",)),
    "prefix_cache_hit_rate": ("rate", ("cache_hit_rate", "gpu_prefix_cache_hit_rate")),
}
_HISTOGRAMS: dict[str, tuple[str, ...]] = {
    "ttft": ("time_to_first_token_seconds",),
    "itl": ("inter_token_latency_seconds", "time_per_output_token_seconds"),
    "e2e": ("e2e_request_latency_seconds",),
}
_GAUGE_STATS = ("running", "waiting", "kv_cache_usage")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One scrape reduced to the quantities llmload reports; absent ones are missing keys."""

    t_s: float  # the scraper's clock (monotonic seconds) when the answer arrived
    values: Mapping[str, float]
    bad_lines: int = 0
    asked_s: float | None = None  # when it was asked: the server's reading lies in between


def _base(name: str) -> str:
    """``vllm:generation_tokens_total`` -> ``generation_tokens``; prefix and ``_total`` dropped."""
    prefix, sep, rest = name.partition(":")
    base = rest if sep and prefix in _PREFIXES else name
    return base.removesuffix("_total")


def _index(samples: Sequence[Sample]) -> dict[str, list[float]]:
    by_base: dict[str, list[float]] = {}
    for s in samples:
        if s.name.endswith(("_created", "_bucket")) or math.isnan(s.value):
            continue  # creation timestamps and buckets; NaN is "no value yet"
        by_base.setdefault(_base(s.name), []).append(s.value)
    return by_base


def _first(by_base: Mapping[str, list[float]], names: Sequence[str], suffix: str = "") -> list[float]:
    for name in names:
        found = by_base.get(name + suffix)
        if found:
            return found
    return []


def reduce(samples: Sequence[Sample], t_s: float, bad_lines: int = 0) -> Snapshot:
    """The quantities of one scrape, with every naming variant folded onto one key."""
    by_base = _index(samples)
    values: dict[str, float] = {}
    for key, names in _COUNTERS.items():
        if found := _first(by_base, names):
            values[key] = sum(found)
    for key, (how, names) in _GAUGES.items():
        found = _first(by_base, names)
        if how == "rate":
            found = [v for v in found if v >= 0]
        if found:
            values[key] = sum(found) / (1 if how == "sum" else len(found))
    for key, names in _HISTOGRAMS.items():
        # _sum and _count must come from the same name, or a mean would mix two histograms.
        for name in names:
            total, count = by_base.get(name + "_sum"), by_base.get(name + "_count")
            if total and count:
                values[key + "_sum"], values[key + "_count"] = sum(total), sum(count)
                break
    return Snapshot(t_s, values, bad_lines)


class Scraper:
    """Scrapes ``/metrics`` whenever ``poll()`` is called; owns no thread or greenlet.

    A 404 means the target has no metrics: ``available`` becomes False and later polls return
    None without asking again. Other failures (refused, 5xx, timeout) return None and are counted
    in ``failures``; the next poll tries again.
    """

    def __init__(
        self,
        host: str,
        client: httpx.Client | None = None,
        *,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        url: str | None = None,
        reducer: Callable[[Sequence[Sample], float, int], Snapshot] | None = None,
    ) -> None:
        """``url``: another endpoint than the host's ``/metrics`` (a DCGM exporter), whose
        samples ``reducer`` turns into a snapshot (default: the engines' names)."""
        self.url = url or base_url(host) + "/metrics"
        self._reduce = reducer or reduce
        self._own = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout_s)
        self._headers = auth_headers(api_key)
        self._clock = clock
        self.available: bool | None = None
        self.failures = 0
        self.last_error: str | None = None
        self.snapshots: list[Snapshot] = []

    def poll(self) -> Snapshot | None:
        if self.available is False:
            return None
        asked_s = self._clock()
        try:
            response = self._client.get(self.url, headers=self._headers)
        except httpx.HTTPError as exc:
            self._failed(f"{type(exc).__name__}: {exc}")
            return None
        if response.status_code == 404:
            self.available = False
            return None
        if response.status_code != 200:
            self._failed(f"HTTP {response.status_code}")
            return None
        parsed = parse(response.text)
        self.available = True
        snapshot = replace(self._reduce(parsed.samples, self._clock(), parsed.bad_lines), asked_s=asked_s)
        self.snapshots.append(snapshot)
        return snapshot

    def _failed(self, error: str) -> None:
        self.failures += 1
        self.last_error = error

    def close(self) -> None:
        if self._own:
            self._client.close()

    def __enter__(self) -> Scraper:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _delta(first: Snapshot, last: Snapshot, key: str) -> float | None:
    b = last.values.get(key)
    # A labelled series appears at its first increment (vLLM V0's histograms do): absent from
    # the first scrape but present in the last, it counted from zero.
    return None if b is None else b - first.values.get(key, 0.0)


def _ratio(num: float | None, den: float | None, scale: float = 1.0) -> float | None:
    return None if num is None or not den else num / den * scale


def _stats(samples: Sequence[Snapshot], key: str) -> dict[str, float] | None:
    seen = [s.values[key] for s in samples if key in s.values]
    if not seen:
        return None
    return {"min": min(seen), "mean": sum(seen) / len(seen), "max": max(seen)}


def _spec(
    first: Snapshot, last: Snapshot, samples: Sequence[Snapshot], reset: bool
) -> dict[str, JSON] | None:
    keys = ("spec_drafts", "spec_draft_tokens", "spec_accepted_tokens")
    drafts, draft_tokens, accepted = (None if reset else _delta(first, last, k) for k in keys)
    gauge = _stats(samples, "spec_accept_length")
    if not any(k in last.values for k in keys) and gauge is None:
        return None
    per_draft = _ratio(accepted, drafts)
    return {
        "drafts": drafts,
        "draft_tokens": draft_tokens,
        "accepted_tokens": accepted,
        "acceptance_rate": _ratio(accepted, draft_tokens),
        "mean_acceptance_length": None if per_draft is None else 1.0 + per_draft,
        "accept_length_gauge_mean": gauge["mean"] if gauge else None,
    }


def summarize(first: Snapshot, last: Snapshot, samples: Sequence[Snapshot]) -> dict[str, JSON]:
    """Server-side numbers between two scrapes, JSON-safe, ``None`` where unknown.

    ``samples`` are the scrapes of the window (empty: just ``first`` and ``last``), for the
    gauges' min/mean/max. A counter that went down means the server restarted in between: every
    delta is then unknown and ``counter_reset`` says why.
    """
    window_s = last.t_s - first.t_s
    counters = (*_COUNTERS, *(k + "_count" for k in _HISTOGRAMS))
    reset = any((d := _delta(first, last, k)) is not None and d < 0 for k in counters)

    def delta(key: str) -> float | None:
        return None if reset else _delta(first, last, key)

    generated = delta("generation_tokens")
    gauges = list(samples) or [first, last]
    out: dict[str, JSON] = {
        "available": True,
        "window_s": window_s,
        # when the server was read at either edge, [asked, answered] on the scraper's monotonic
        # clock: its counters' deltas are of the requests it counted in between
        "edges_s": [[first.asked_s, first.t_s], [last.asked_s, last.t_s]],
        "counter_reset": reset,
        "generation_tokens": generated,
        "generation_tok_per_s": _ratio(generated, window_s),
        "prompt_tokens": delta("prompt_tokens"),
        "preemptions": delta("preemptions"),
        # llama.cpp's own seconds spent evaluating prompts and generating, over the window
        "prompt_seconds": delta("prompt_seconds"),
        "generation_seconds": delta("generation_seconds"),
        "cached_prompt_tokens": delta("cached_prompt_tokens"),
    }
    for key in _GAUGE_STATS:
        out[key] = _stats(gauges, key)
    for key in _HISTOGRAMS:
        out[f"{key}_mean_ms"] = _ratio(delta(key + "_sum"), delta(key + "_count"), 1e3)
    out["spec_decode"] = _spec(first, last, gauges, reset)
    out.update(_prefix_cache(first, last, gauges, reset))
    return out


def _prefix_cache(
    first: Snapshot, last: Snapshot, samples: Sequence[Snapshot], reset: bool
) -> dict[str, float | None]:
    """The stage's prefix-cache hit rate: from the token counters, else the gauge's mean."""
    queries, hits = (None if reset else _delta(first, last, k)
                     for k in ("prefix_cache_queries", "prefix_cache_hits"))  # fmt: skip
    if "prefix_cache_queries" in last.values:
        rate = _ratio(hits, queries)
    elif "cached_prompt_tokens" in last.values and not reset:
        # llama.cpp counts evaluated and reused prompt tokens apart: together they are the queries
        hits = _delta(first, last, "cached_prompt_tokens")
        evaluated = _delta(first, last, "prompt_tokens")
        queries = None if hits is None or evaluated is None else hits + evaluated
        rate = _ratio(hits, queries)
    else:
        gauge = _stats(samples, "prefix_cache_hit_rate")
        rate = gauge["mean"] if gauge else None
    return {"prefix_cache_queries": queries, "prefix_cache_hits": hits, "prefix_cache_hit_rate": rate}
