"""The Prometheus text parser: the format's corners, and every fixture of a real server."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from llmload.target.promtext import Sample, parse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "servers"


def by_name(samples: tuple[Sample, ...], name: str) -> list[Sample]:
    return [s for s in samples if s.name == name]


def test_colons_labels_escapes_and_special_values() -> None:
    text = (
        "# HELP vllm:num_requests_running Number of requests.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{engine="0",model_name="a \\"quoted\\" \\\\ name\\nx"} 3.0\n'
        "# a free-form comment\n"
        "\n"
        'vllm:kv_cache_usage_perc{engine="0"} NaN\n'
        "plain_metric 7 1700000000000\n"
        "negative -Inf\n"
    )
    parsed = parse(text)
    assert parsed.bad_lines == 0
    (running,) = by_name(parsed.samples, "vllm:num_requests_running")
    assert running.value == 3.0
    assert running.label("model_name") == 'a "quoted" \\ name\nx'
    assert running.label("engine") == "0"
    assert math.isnan(by_name(parsed.samples, "vllm:kv_cache_usage_perc")[0].value)
    assert by_name(parsed.samples, "plain_metric")[0].value == 7.0  # the timestamp is not the value
    assert by_name(parsed.samples, "negative")[0].value == -math.inf


def test_histogram_lines_keep_their_suffixes_and_le() -> None:
    text = (
        "# TYPE sglang:time_to_first_token_seconds histogram\n"
        'sglang:time_to_first_token_seconds_bucket{le="0.5",model_name="m"} 2.0\n'
        'sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 3.0\n'
        'sglang:time_to_first_token_seconds_sum{model_name="m"} 1.25\n'
        'sglang:time_to_first_token_seconds_count{model_name="m"} 3.0\n'
    )
    samples = parse(text).samples
    buckets = by_name(samples, "sglang:time_to_first_token_seconds_bucket")
    assert [(b.label("le"), b.value) for b in buckets] == [("0.5", 2.0), ("+Inf", 3.0)]
    assert by_name(samples, "sglang:time_to_first_token_seconds_sum")[0].value == 1.25
    assert by_name(samples, "sglang:time_to_first_token_seconds_count")[0].value == 3.0


def test_counters_keep_total_and_created_as_separate_samples() -> None:
    text = (
        "# TYPE vllm:generation_tokens counter\n"
        'vllm:generation_tokens_total{engine="0"} 10.0\n'
        'vllm:generation_tokens_created{engine="0"} 1.7e9\n'
    )
    names = [s.name for s in parse(text).samples]
    assert names == ["vllm:generation_tokens_total", "vllm:generation_tokens_created"]


def test_a_malformed_line_costs_only_itself() -> None:
    text = 'good_one 1\nbroken{a="x} 2\nalso broken\ngood_two{a="y"} 3\n'
    parsed = parse(text)
    assert parsed.bad_lines == 2
    assert [(s.name, s.value) for s in parsed.samples] == [("good_one", 1.0), ("good_two", 3.0)]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.txt")))
def test_every_real_server_fixture_parses_cleanly(name: str) -> None:
    parsed = parse((FIXTURES / name).read_text())
    assert parsed.bad_lines == 0
    assert len(parsed.samples) > 10
    assert all(s.name.split(":")[0] in ("vllm", "sglang", "llamacpp") for s in parsed.samples)
