"""Server-side deltas from real /metrics of vLLM V0, vLLM V1 and SGLang, and the Scraper's rules."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from llmload.target.promtext import parse
from llmload.target.scrape import Scraper, Snapshot, reduce, summarize

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "servers"


def snap(text: str, t_s: float) -> Snapshot:
    return reduce(parse(text).samples, t_s)


def fixture(name: str, t_s: float) -> Snapshot:
    return snap((FIXTURES / name).read_text(), t_s)


def test_vllm_v0_names() -> None:
    first, last = fixture("vllm_v0_metrics_start.txt", 0.0), fixture("vllm_v0_metrics_end.txt", 10.0)
    s = summarize(first, last, [first, last])
    assert s["generation_tokens"] == 2560 and s["prompt_tokens"] == 1280
    assert s["generation_tok_per_s"] == pytest.approx(256.0)
    # The histograms first appear in the second scrape: they counted from zero.
    assert s["ttft_mean_ms"] == pytest.approx(52.34)
    assert s["itl_mean_ms"] == pytest.approx(41.31 / 2550 * 1e3)  # time_per_output_token_seconds
    assert s["kv_cache_usage"] == {"min": 0.0, "mean": pytest.approx(0.01365), "max": 0.0273}
    assert s["running"] == {"min": 0.0, "mean": 2.0, "max": 4.0}
    assert s["spec_decode"] is None and s["counter_reset"] is False
    # gpu_prefix_cache_hit_rate is -1 with prefix caching off (enable_prefix_caching="False").
    assert "prefix_cache_hit_rate" not in last.values and s["prefix_cache_hit_rate"] is None


def test_vllm_v1_names_two_engines_and_speculative_decoding() -> None:
    first, last = fixture("vllm_v1_metrics_start.txt", 100.0), fixture("vllm_v1_metrics_end.txt", 120.0)
    s = summarize(first, last, [first, last])
    assert s["window_s"] == 20.0
    assert s["edges_s"] == [[None, 100.0], [None, 120.0]]  # answered; when asked, only a poll knows
    assert s["generation_tokens"] == 8440 and s["prompt_tokens"] == 5120
    assert s["preemptions"] == 2
    assert s["ttft_mean_ms"] == pytest.approx(60.0)
    # inter_token_latency_seconds, not also its deprecated twin: 2960 observations, not 5920.
    assert s["itl_mean_ms"] == pytest.approx(12.0)
    assert last.values["itl_count"] - first.values["itl_count"] == 2960
    # Running adds up over engines; KV-cache usage is the engines' mean, not their sum.
    assert s["running"]["max"] == 8.0 and s["waiting"]["max"] == 1.0
    assert s["kv_cache_usage"]["max"] == pytest.approx((0.42 + 0.61) / 2)
    spec = s["spec_decode"]
    assert (spec["drafts"], spec["draft_tokens"], spec["accepted_tokens"]) == (3000, 9000, 5400)
    assert spec["acceptance_rate"] == pytest.approx(0.6)
    assert spec["mean_acceptance_length"] == pytest.approx(2.8)
    assert spec["accept_length_gauge_mean"] is None
    # The V1 counters, not also their deprecated gpu_ twins: 5120 queried tokens, not 10240.
    assert (s["prefix_cache_queries"], s["prefix_cache_hits"]) == (5120, 0)
    assert s["prefix_cache_hit_rate"] == 0.0


def test_sglang_names() -> None:
    first, last = fixture("sglang_metrics_start.txt", 0.0), fixture("sglang_metrics_end.txt", 5.0)
    s = summarize(first, last, [first, last])
    assert s["generation_tokens"] == pytest.approx(12800) and s["prompt_tokens"] == pytest.approx(6400)
    assert s["ttft_mean_ms"] == pytest.approx(1500.0)
    assert s["itl_mean_ms"] == pytest.approx(80.0)  # from time_per_output_token_seconds
    assert s["running"] == {"min": 128.0, "mean": 145.0, "max": 162.0}  # num_running_reqs
    assert s["waiting"]["max"] == 2826.0  # num_queue_reqs
    assert s["kv_cache_usage"]["max"] == 0.34  # token_usage
    spec = s["spec_decode"]
    assert spec["accept_length_gauge_mean"] == pytest.approx(3.28)
    assert spec["acceptance_rate"] is None and spec["mean_acceptance_length"] is None
    assert s["prefix_cache_hit_rate"] == pytest.approx(0.007507552643049313)  # cache_hit_rate gauge
    assert s["prefix_cache_queries"] is None


def test_prefix_cache_hit_rate_is_hits_over_queries_within_the_stage() -> None:
    # Synthetic text, not a capture: a stage that found 3 of every 4 queried tokens cached.
    first = snap('vllm:prefix_cache_queries_total{engine="0"} 1000\n'
                 'vllm:prefix_cache_hits_total{engine="0"} 900\n', 0.0)  # fmt: skip
    last = snap('vllm:prefix_cache_queries_total{engine="0"} 5000\n'
                'vllm:prefix_cache_hits_total{engine="0"} 3900\n', 10.0)  # fmt: skip
    s = summarize(first, last, [first, last])
    assert (s["prefix_cache_queries"], s["prefix_cache_hits"]) == (4000, 3000)
    assert s["prefix_cache_hit_rate"] == 0.75  # not 3900/5000 since the server started
    idle = summarize(last, last, [last])
    assert idle["prefix_cache_hit_rate"] is None  # no query, no rate
    restarted = summarize(last, first, [last, first])
    assert restarted["counter_reset"] is True and restarted["prefix_cache_hit_rate"] is None


def test_a_hit_rate_gauge_is_averaged_over_the_scrapes_and_negatives_mean_unknown() -> None:
    line = 'sglang:cache_hit_rate{{model_name="m"}} {}\n'
    gauges = [snap(line.format(v), t) for t, v in enumerate((0.5, 0.0, 1.0))]
    assert summarize(gauges[0], gauges[-1], gauges)["prefix_cache_hit_rate"] == 0.5
    v0 = [snap(f"vllm:gpu_prefix_cache_hit_rate {v}\n", t) for t, v in enumerate((-1.0, 0.2, 0.4))]
    assert summarize(v0[0], v0[-1], v0)["prefix_cache_hit_rate"] == pytest.approx(0.3)


def test_tolerant_names_prefer_the_new_one_and_ignore_created() -> None:
    text = (
        "vllm:generation_tokens 40\n"  # no _total suffix
        "vllm:generation_tokens_created 1.7e9\n"
        'vllm:gpu_cache_usage_perc{engine="0"} 0.9\n'
        'vllm:kv_cache_usage_perc{engine="0"} 0.5\n'
        "vllm:time_per_output_token_seconds_sum 99\nvllm:time_per_output_token_seconds_count 9\n"
        "vllm:inter_token_latency_seconds_sum 2\nvllm:inter_token_latency_seconds_count 100\n"
        "llamacpp:spec_decode_num_drafts_total 10\n"
        'vllm:num_requests_running{model_name="a"} 2\nvllm:num_requests_running{model_name="b"} 3\n'
    )
    values = snap(text, 0.0).values
    assert values["generation_tokens"] == 40
    assert values["kv_cache_usage"] == 0.5
    assert (values["itl_sum"], values["itl_count"]) == (2, 100)
    assert values["spec_drafts"] == 10
    assert values["running"] == 5


def test_a_counter_going_down_means_a_restart_and_no_deltas() -> None:
    first = snap("vllm:generation_tokens_total 500\nvllm:num_requests_running 3\n", 0.0)
    last = snap("vllm:generation_tokens_total 20\nvllm:num_requests_running 1\n", 5.0)
    s = summarize(first, last, [])
    assert s["counter_reset"] is True
    assert s["generation_tokens"] is None and s["generation_tok_per_s"] is None
    assert s["running"] == {"min": 1.0, "mean": 2.0, "max": 3.0}  # gauges still mean something


def test_summary_is_json_safe_with_none_for_the_unknown() -> None:
    first, last = snap("vllm:num_requests_running 0\n", 0.0), snap("vllm:num_requests_running 1\n", 1.0)
    s = summarize(first, last, [])
    json.dumps(s, allow_nan=False)
    assert s["generation_tokens"] is None and s["ttft_mean_ms"] is None and s["spec_decode"] is None


class Script:
    """A MockTransport handler answering /metrics from a list, recording every request."""

    def __init__(self, *answers: int | str) -> None:
        self.answers = list(answers)
        self.requests: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(str(request.url))
        answer = self.answers.pop(0)
        if isinstance(answer, int):
            return httpx.Response(answer, text="no")
        return httpx.Response(200, text=answer)


def test_scraper_404_means_unavailable_and_it_stops_asking() -> None:
    script = Script(404)
    with Scraper("http://box:8000/v1/", client=httpx.Client(transport=httpx.MockTransport(script))) as s:
        assert s.poll() is None and s.available is False
        assert s.poll() is None
    assert script.requests == ["http://box:8000/metrics"]


def test_scraper_failures_are_counted_and_retried() -> None:
    script = Script(500, "vllm:generation_tokens_total 7\n")
    clock = iter([1.0, 2.0, 3.0])  # asked and failed; asked, then answered
    client = httpx.Client(transport=httpx.MockTransport(script))
    scraper = Scraper("http://box:8000", client=client, clock=lambda: next(clock))
    assert scraper.poll() is None and scraper.failures == 1 and scraper.last_error == "HTTP 500"
    snapshot = scraper.poll()
    assert snapshot is not None and (snapshot.asked_s, snapshot.t_s) == (2.0, 3.0)
    assert snapshot.values["generation_tokens"] == 7
    assert scraper.available is True and scraper.snapshots == [snapshot]


def test_scraper_survives_a_refused_connection() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    scraper = Scraper("http://box:8000", client=httpx.Client(transport=httpx.MockTransport(refuse)))
    assert scraper.poll() is None and scraper.available is None
    assert scraper.last_error is not None and "ConnectError" in scraper.last_error


def test_llamacpp_names() -> None:
    # Captured from llama-server (llama-cpp-python 0.3.36's llama.cpp) before and after four
    # chat requests of 32 prompt tokens and 8 (then 4) output tokens, the last three reusing the
    # first one's prompt from the slot's cache.
    first, last = fixture("llamacpp_metrics_start.txt", 0.0), fixture("llamacpp_metrics_end.txt", 2.0)
    s = summarize(first, last, [first, last])
    assert s["generation_tokens"] == 28  # tokens_predicted
    assert s["prompt_tokens"] == 35 and s["cached_prompt_tokens"] == 93  # evaluated, and reused
    assert s["prefix_cache_hits"] == 93 and s["prefix_cache_queries"] == 128
    assert s["prefix_cache_hit_rate"] == pytest.approx(93 / 128)
    assert s["prompt_seconds"] == pytest.approx(0.526738) and s["generation_seconds"] == pytest.approx(
        0.529258
    )
    assert s["running"] == {"min": 0.0, "mean": 0.0, "max": 0.0}  # requests_processing
    assert s["waiting"]["max"] == 0.0  # requests_deferred
