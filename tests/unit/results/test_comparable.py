"""The comparability key (docs/history.md): runs that asked the same of the same model on the
same hardware share it; any other difference in the workload or target is named, field by field."""

from __future__ import annotations

from typing import Any

import configargparse  # type: ignore[import-untyped]

from llmload.config.args import add_options, to_config
from llmload.results.comparable import ComparabilityKey, Difference, differing, key_of
from llmload.results.runrecord import run_labels
from tests.support.summaries import summary


def run_of(*argv: str, scenario: str = "chat", model: str | None = "m", **run: Any) -> Any:
    """A summary whose options are what the Locust options ``argv`` make of a RunConfig."""
    parser = configargparse.ArgumentParser(prog="locust")
    add_options(parser)
    parser.add_argument("--host", default="http://127.0.0.1:9")
    config = to_config(parser.parse_args(["--tokenize", "off", *argv]), scenario=scenario)
    return summary(options=config.public_dict(), scenario=scenario, model=model, **run)


def key(*argv: str, **run: Any) -> ComparabilityKey:
    s = run_of(*argv, **run)
    return key_of(s, run_labels(s))


def test_the_key_reads_the_workload_and_the_target_from_the_options_the_run_used() -> None:
    found = key(
        "--max-tokens", "256", "--prompt-tokens", "uniform:64:512", "--ignore-eos", "--label", "hardware=h100"
    )
    assert found == ComparabilityKey(
        scenario="chat",
        prompt_tokens="uniform:64:512",
        output_tokens="256",
        ignore_eos=True,
        api="chat",
        stream=True,
        model="m",
        hardware="h100",
    )
    assert (
        found.describe()
        == "chat · prompt uniform:64:512 · output 256 · ignore-eos · chat · stream · m · hardware h100"
    )


def test_lengths_as_the_user_gave_them_jitter_and_a_dataset_included(tmp_path: Any) -> None:
    assert key("--max-tokens", "lognormal:128:0.5").output_tokens == "lognormal:128:0.5:32768"
    assert key("--max-tokens", "200", "--output-jitter", "0.1").output_tokens == "200~0.1"
    data = tmp_path / "sharegpt.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    assert key("--dataset", str(data)).prompt_tokens == "dataset:sharegpt.jsonl"


def test_the_api_is_where_the_requests_went() -> None:
    assert key("--api", "responses").api == "responses"  # --api replaces chat
    assert key().api == "chat"
    assert key("--no-stream").stream is False


def test_the_same_workload_is_one_key_whatever_the_engine_labels_or_seed() -> None:
    first = key("--label", "image=vllm:0.9.1", "--seed", "1")
    second = key(
        "--label", "image=vllm:0.9.2", "--seed", "2", id="another", started_at="2026-01-01T00:00:00+0000"
    )
    assert first == second and first.hash == second.hash and differing(first, second) == ()


def test_the_fields_that_differ_are_named_in_the_keys_order() -> None:
    first = key("--max-tokens", "128", "--label", "hardware=h100")
    second = key("--max-tokens", "256", "--no-stream", "--label", "hardware=a100", model="other")
    assert first.hash != second.hash
    assert differing(first, second) == (
        Difference("output_tokens", "128", "256"),
        Difference("stream", True, False),
        Difference("model", "m", "other"),
        Difference("hardware", "h100", "a100"),
    )
    assert [d.describe() for d in differing(first, second)][1] == "stream: yes → no"


def test_the_hash_is_stable_across_versions() -> None:
    # users name keys by this hash: a change here silently splits every stored trend in two
    fixed = ComparabilityKey(
        scenario="sweep",
        prompt_tokens="128",
        output_tokens="256",
        ignore_eos=True,
        api="chat",
        stream=True,
        model="meta-llama/Llama-3.1-8B-Instruct",
        hardware=None,
    )
    assert fixed.hash == "9082eb430145"
