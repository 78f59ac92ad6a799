"""The command line: flags become a frozen config, mistakes name their flag."""

from __future__ import annotations

import dataclasses

import pytest

from llmload.errors import ConfigError
from llmload.sim.cli import config_from_args
from llmload.sim.faults import FaultMode
from llmload.sim.profiles import get_profile

MS = 1_000_000


def test_defaults() -> None:
    config = config_from_args([])
    assert (config.host, config.port, config.profile.name) == ("127.0.0.1", 8000, "vllm")
    assert config.params == get_profile("vllm").params()
    assert config.timing is None
    assert config.model == "sim-llama-3-8b"
    assert not config.faults.modes
    assert not config.emit_timestamps
    assert config.tokenize_route and not config_from_args(["--no-tokenize-route"]).tokenize_route


def test_fixed_timing() -> None:
    config = config_from_args(["--ttft-ms", "50", "--step-ms", "20", "--tokens-per-chunk", "3"])
    assert config.timing is not None
    assert (config.timing.ttft_ns, config.timing.step_ns, config.tokens_per_chunk) == (50 * MS, 20 * MS, 3)


def test_step_flags_override_the_profile() -> None:
    config = config_from_args(["--profile", "sglang", "--step-base-ms", "4", "--max-running", "8"])
    base = get_profile("sglang").params()
    assert config.params.step_base_ns == 4 * MS
    assert config.params.step_per_seq_ns == base.step_per_seq_ns
    assert config.params.max_running == 8


def test_prefix_cache_is_on_by_default_and_sized_by_the_kv_budget() -> None:
    assert config_from_args([]).params.prefix_cache_tokens == 500_000
    assert config_from_args(["--no-prefix-cache"]).params.prefix_cache_tokens == 0
    assert config_from_args(["--prefix-cache-tokens", "4096"]).params.prefix_cache_tokens == 4096
    resized = config_from_args(["--profile", "sglang", "--kv-budget-tokens", "20000"]).params
    assert resized.prefix_cache_tokens == resized.kv_budget_tokens == 20_000
    # The cache changes no solved step time: the targets are of prompts that share nothing.
    off = config_from_args(["--no-prefix-cache"]).params
    assert dataclasses.replace(off, prefix_cache_tokens=500_000) == config_from_args([]).params


def test_faults_and_tls() -> None:
    config = config_from_args(["--fault", "http_429,reset", "--fault-rate", "0.25", "--seed", "5"])
    assert config.faults.modes == (FaultMode.HTTP_429, FaultMode.RESET)
    assert (config.faults.rate, config.faults.seed) == (0.25, 5)
    assert config_from_args(["--certfile", "c.pem"]).scheme == "https"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--ttft-ms", "5"], "--ttft-ms/--step-ms"),
        (["--ttft-ms", "5", "--step-ms", "1", "--step-base-ms", "2"], "--step-base-ms"),
        (["--ttft-ms", "5", "--step-ms", "0"], "--step-ms"),
        (["--ttft-ms", "5", "--step-ms", "1", "--max-running", "2"], "--max-running"),
        (["--ttft-ms", "5", "--step-ms", "1", "--kv-budget-tokens", "900"], "--kv-budget-tokens"),
        (["--step-base-ms", "-1"], "--step-base-ms"),
        (["--max-running", "0"], "--max-running"),
        (["--fault", "nope"], "--fault"),
        (["--fault-rate", "2"], "--fault-rate"),
        (["--keyfile", "k.pem"], "--keyfile"),
        (["--startup-delay-s", "-1"], "--startup-delay-s"),
        (["--port", "70000"], "--port"),
        (["--profile", "sglang", "--enable-per-request-metrics"], "--enable-per-request-metrics"),
        (["--enable-per-request-metrics", "--no-per-request-metrics"], "--no-per-request-metrics"),
        (["--prefix-cache-tokens", "0"], "--prefix-cache-tokens"),
        (["--no-prefix-cache", "--prefix-cache-tokens", "64"], "--prefix-cache-tokens"),
        (["--draft-acceptance", "0.5"], "--draft-tokens"),
        (["--draft-tokens", "3", "--draft-acceptance", "1"], "--draft-acceptance"),
        (["--draft-tokens", "3", "--tokens-per-chunk", "2"], "--tokens-per-chunk"),
    ],
)
def test_mistakes_name_their_flag(argv: list[str], flag: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_args(argv)
    assert info.value.option == flag


def test_a_drafter_from_the_profile_or_the_flags() -> None:
    eagle = config_from_args(["--profile", "vllm-eagle3"])
    assert eagle.speculative and eagle.params.speculation is not None
    assert eagle.params.speculation.draft_tokens == 3
    assert config_from_args(["--profile", "vllm-eagle3", "--draft-tokens", "0"]).params.speculation is None
    tuned = config_from_args(["--step-base-ms", "10", "--draft-tokens", "4", "--draft-acceptance", "0.5"])
    assert tuned.params.speculation is not None
    assert (tuned.params.speculation.draft_tokens, tuned.params.speculation.acceptance) == (4, 0.5)
    assert tuned.params.speculation.draft_ns == 500_000  # 5% of the step base
    assert not config_from_args([]).speculative


def test_unknown_profile_is_an_argparse_error() -> None:
    with pytest.raises(SystemExit):
        config_from_args(["--profile", "tgi"])


def test_replicas_and_router() -> None:
    config = config_from_args([])
    assert (config.replicas, config.router, config.session_header) == (1, "round-robin", "x-session-affinity")
    config = config_from_args(
        ["--replicas", "4", "--router", "session", "--session-header", "X-Correlation-ID"]
    )
    assert (config.replicas, config.router, config.session_header) == (4, "session", "x-correlation-id")


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--replicas", "0"], "--replicas"),
        (["--replicas", "65"], "--replicas"),
        (["--session-header", "x session"], "--session-header"),
        (["--model", "a,,b"], "--model"),
        (["--model", "a,b,a"], "--model"),
        (["--adapter-switch-ms", "-1"], "--adapter-switch-ms"),
        (["--ttft-ms", "5", "--step-ms", "5", "--adapter-switch-ms", "2"], "--adapter-switch-ms"),
    ],
)
def test_replica_and_model_mistakes_name_their_flag(argv: list[str], flag: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_args(argv)
    assert info.value.option == flag


def test_served_models_extend_the_model_flag() -> None:
    config = config_from_args(["--model", "base,lora-a, lora-b", "--adapter-switch-ms", "2.5"])
    assert config.model == "base" and config.adapters == ("lora-a", "lora-b")
    assert config.served_models == ("base", "lora-a", "lora-b")
    assert config.adapter_switch_ns == 2_500_000
    same = config_from_args(["--served-models", "base,lora-a, lora-b"])
    assert same.served_models == config.served_models
    assert config_from_args([]).served_models == ("sim-llama-3-8b",)
