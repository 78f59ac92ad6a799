"""The prefix cache of a real simulator: a repeated prompt's TTFT drops by its cached prefill.

This is the repeat-run trap in two requests: the same long prompt sent twice, one stream at a
time, prefills in full the first time and only its uncached tail the second. A unique first word,
as llmload's salt, avoids it; ``--no-prefix-cache`` removes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from llmload.sim.process import SimProcess, start_sim
from llmload.sim.profiles import get_profile
from llmload.sim.tokens import TOKENS_PER_MESSAGE, chat_prompt_tokens
from llmload.target.scrape import Scraper, summarize
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat
from tests.support.wire import Response, chat_body, exchange

pytestmark = [pytest.mark.integration]

CHAT = "/v1/chat/completions"
MS = 1_000_000
WORDS = 2_000
PROMPT_TOKENS = chat_prompt_tokens(WORDS, 1)  # 2,006
CACHED = (PROMPT_TOKENS - 1) // 16 * 16  # 2,000: every full block, the last token recomputed
_TOKEN = b'"content":" '


def _body(words: list[str]) -> dict[str, Any]:
    body = chat_body(4, messages=[{"role": "user", "content": " ".join(words)}])
    body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    return body


def _prompt(tag: str = "w", n: int = WORDS) -> list[str]:
    return [f"{tag}{i}" for i in range(n)]


def _send(sim: SimProcess, words: list[str]) -> tuple[Response, int]:
    """One streamed request; returns the response and the client's TTFT."""
    sent = time.perf_counter_ns()
    response = exchange(sim.port, CHAT, _body(words))
    assert response.complete, response.end
    first = next(t for t, data in response.reads if _TOKEN in data)
    return response, first - sent


def _cached(response: Response) -> int:
    usage = response.chunks()[-1]["usage"]
    assert usage["prompt_tokens"] == PROMPT_TOKENS
    return int(usage["prompt_tokens_details"]["cached_tokens"])


def _admission_step_ns(sim: SimProcess, since_ns: int) -> int:
    """The modelled duration of the longest step since ``since_ns``: the admission step."""
    return int(sim.stats(since_ns)["step_duration"]["max_ns"])


def _metric(sim: SimProcess, name: str) -> float:
    _, body = sim.get("/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not exported")


def _twice(args: list[str]) -> tuple[list[int], list[int], list[int], list[dict[str, Any]], dict[str, Any]]:
    """The same prompt twice: cached tokens, client TTFTs, admission steps, truth, scrape."""
    with start_sim(["--realtime", *args]) as sim, Scraper(sim.url) as scraper:
        before = scraper.poll()
        cached, ttfts, steps = [], [], []
        began = time.perf_counter_ns()
        for _ in range(2):
            since = time.perf_counter_ns()
            response, ttft = _send(sim, _prompt())
            cached.append(_cached(response))
            ttfts.append(ttft)
            steps.append(_admission_step_ns(sim, since))
        after = scraper.poll()
        entries = sim.requests()
        metrics: dict[str, Any] = {"queries": _metric(sim, "vllm:prefix_cache_queries_total"),
                                   "hits": _metric(sim, "vllm:prefix_cache_hits_total")}  # fmt: skip
        metrics["stats"] = sim.stats(began)
    assert before is not None and after is not None
    metrics["scraped"] = summarize(before, after, [before, after])
    return cached, ttfts, steps, entries, metrics


def _judge_two(
    judge: Judge, stats: dict[str, Any], truth_ms: float, client_ms: float, expected_ms: float
) -> None:
    """Two single requests' TTFTs compared: the simulator's own (at SCHED_FIFO where permitted)
    within 2 ms of ``expected_ms``; the client's, at normal priority and late by the
    simulator's lateness too, within 4 ms."""
    judge.during(int(stats["since_ns"]))  # the two requests and the judging
    judge.realtime(bool(stats["realtime"]))
    judge.close(truth_ms, expected_ms, 2, Stat.EVERY, "the simulator's TTFT difference")
    judge.realtime(False)
    judge.server(stats)
    judge.close(client_ms, expected_ms, 4, Stat.EVERY, "the client's TTFT difference")


@pytest.mark.timing
def test_the_same_long_prompt_twice_skips_the_cached_prefill(judge: Judge) -> None:
    params = get_profile("vllm").params()
    cached, ttfts, steps, entries, metrics = _twice([])
    assert cached == [0, CACHED]
    assert [e["cached_tokens"] for e in entries] == [0, CACHED]
    # The modelled admission steps: full prefill, then only the 6 uncached tokens.
    assert steps == [params.step_ns(1, PROMPT_TOKENS), params.step_ns(1, PROMPT_TOKENS - CACHED)]
    saved_ns = CACHED * params.prefill_per_token_ns  # 40 ms at 0.02 ms a token
    truth_ttfts = [e["first_token_ns"] - e["arrival_ns"] for e in entries]
    drop, client_drop = truth_ttfts[0] - truth_ttfts[1], ttfts[0] - ttfts[1]
    message = (f"TTFT {ttfts[0] / MS:.2f} -> {ttfts[1] / MS:.2f} ms (client), "
               f"{truth_ttfts[0] / MS:.2f} -> {truth_ttfts[1] / MS:.2f} ms (simulator), "
               f"modelled saving {saved_ns / MS:.2f} ms")  # fmt: skip
    print(message)
    # not timing: a floor of a latency (the model's step), which noise only lengthens
    assert truth_ttfts[1] >= steps[1], "never earlier than the model"
    _judge_two(judge, metrics["stats"], drop / MS, client_drop / MS, saved_ns / MS)
    assert (metrics["queries"], metrics["hits"]) == (2 * PROMPT_TOKENS, CACHED)
    scraped = metrics["scraped"]
    assert (scraped["prefix_cache_queries"], scraped["prefix_cache_hits"]) == (2 * PROMPT_TOKENS, CACHED)
    assert scraped["prefix_cache_hit_rate"] == pytest.approx(CACHED / (2 * PROMPT_TOKENS))


@pytest.mark.timing
def test_no_prefix_cache_means_no_drop(judge: Judge) -> None:
    params = get_profile("vllm").params()
    cached, ttfts, steps, entries, metrics = _twice(["--no-prefix-cache"])
    assert cached == [0, 0] and [e["cached_tokens"] for e in entries] == [0, 0]
    assert steps == [params.step_ns(1, PROMPT_TOKENS)] * 2
    assert (metrics["queries"], metrics["hits"]) == (0, 0)
    assert metrics["scraped"]["prefix_cache_hit_rate"] is None  # nothing was looked up
    truth_ttfts = [e["first_token_ns"] - e["arrival_ns"] for e in entries]
    message = (
        f"TTFT {ttfts[0] / MS:.2f} and {ttfts[1] / MS:.2f} ms (client), "
        f"{truth_ttfts[0] / MS:.2f} and {truth_ttfts[1] / MS:.2f} ms (simulator) without a cache"
    )
    print(message)
    _judge_two(judge, metrics["stats"], (truth_ttfts[0] - truth_ttfts[1]) / MS, (ttfts[0] - ttfts[1]) / MS, 0)


@pytest.mark.parametrize(("shared", "cached"), [(12, 0), (13, 16), (29, 32), (100, 96)])
def test_prompts_sharing_their_first_words_share_exactly_those_full_blocks(
    fast_batching_sim: SimProcess, shared: int, cached: int
) -> None:
    # The user text starts after the 3 template tokens of its message: 29 shared words make 32
    # shared tokens, two full blocks.
    assert cached == (TOKENS_PER_MESSAGE + shared) // 16 * 16
    head = _prompt(f"s{shared}x", shared)
    first = exchange(fast_batching_sim.port, CHAT, _body([*head, *_prompt("a", 200)]))
    second = exchange(fast_batching_sim.port, CHAT, _body([*head, *_prompt("b", 200)]))
    details = [r.chunks()[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] for r in (first, second)]
    assert details == [0, cached]


def test_a_unique_first_word_never_hits(fast_batching_sim: SimProcess) -> None:
    body = _prompt("u", 300)
    responses = [exchange(fast_batching_sim.port, CHAT, _body([f"salt{i}", *body])) for i in range(3)]
    assert [r.chunks()[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] for r in responses] == [0] * 3


def test_sglang_exports_the_latest_prefill_batchs_hit_rate() -> None:
    with start_sim(["--profile", "sglang", "--step-base-ms=1", "--step-per-seq-ms=0"]) as sim:
        scraper = Scraper(sim.url)
        first = scraper.poll()
        for _ in range(2):
            exchange(sim.port, CHAT, _body(_prompt()))
        last = scraper.poll()
        _, raw = sim.get("/metrics")
        scraper.close()
    text = raw.decode()
    assert "vllm:prefix_cache_queries" not in text
    assert _value(text, "sglang:cache_hit_rate") == pytest.approx(CACHED / PROMPT_TOKENS)
    assert first is not None and last is not None
    s = summarize(first, last, [first, last])  # the gauge's mean: 0 before, 2000/2006 after
    assert s["prefix_cache_hit_rate"] == pytest.approx(CACHED / PROMPT_TOKENS / 2)


def _value(text: str, name: str) -> float:
    line = next(ln for ln in text.splitlines() if ln.startswith(name + "{"))
    return float(line.rsplit(" ", 1)[1])


@pytest.fixture(scope="module")
def fast_batching_sim() -> Iterator[SimProcess]:
    """The vllm profile with short steps: the batching model, its prefix cache, little waiting."""
    with start_sim(["--step-base-ms=1", "--step-per-seq-ms=0"]) as sim:
        yield sim


def test_ground_truth_log_carries_cached_tokens(fast_batching_sim: SimProcess) -> None:
    words = _prompt("g", 64)
    for _ in range(2):
        exchange(fast_batching_sim.port, CHAT, chat_body(2, stream=False, messages=[
            {"role": "user", "content": " ".join(words)}]))  # fmt: skip
    last = fast_batching_sim.requests()[-1]
    assert last["cached_tokens"] == chat_prompt_tokens(64, 1) // 16 * 16 == 64
    status, body = fast_batching_sim.get("/sim/config")
    assert status == 200 and json.loads(body)["params"]["prefix_cache_tokens"] == 500_000
