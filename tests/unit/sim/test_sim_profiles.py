"""Profiles solve their step times so the analytic sweep hits their measured targets."""

from __future__ import annotations

import dataclasses

import pytest

from llmload.sim.model import DEFAULT_SWEEP, per_stream_decode_tok_per_s, stage_output_tok_per_s
from llmload.sim.profiles import all_profiles, get_profile, profile_names, solve

EXPECTED_TARGETS = {
    "vllm": {1: 82.5, 128: 1536.0},
    "sglang-nograph": {1: 27.0, 128: 2216.0},
    "sglang": {1: 63.6, 128: 2370.0},
}


@pytest.mark.parametrize("name", sorted(EXPECTED_TARGETS))
def test_calibrated_profiles_hit_the_seed_measurements(name: str) -> None:
    profile = get_profile(name)
    assert dict(profile.targets) == EXPECTED_TARGETS[name]
    params = profile.params()
    for concurrency, target in EXPECTED_TARGETS[name].items():
        assert stage_output_tok_per_s(params, concurrency) == pytest.approx(target, rel=0.01)


@pytest.mark.parametrize("profile", all_profiles(), ids=lambda p: p.name)
def test_every_target_is_met(profile: object) -> None:
    params = solve(profile)  # type: ignore[arg-type]
    for concurrency, target in profile.targets:  # type: ignore[attr-defined]
        assert stage_output_tok_per_s(params, concurrency) == pytest.approx(target, rel=1e-4)


def test_vllm_at_32_streams_follows_the_model() -> None:
    # The estimate: about 1,085 tok/s decode-only before prefill effects.
    assert stage_output_tok_per_s(get_profile("vllm").params(), 32) == pytest.approx(1085, rel=0.01)


def test_interior_peak_peaks_inside_the_default_sweep() -> None:
    params = get_profile("interior-peak").params()
    values = {c: stage_output_tok_per_s(params, c) for c in DEFAULT_SWEEP}
    peak = max(values, key=values.__getitem__)
    assert peak not in (DEFAULT_SWEEP[0], DEFAULT_SWEEP[-1])
    assert peak == 32
    assert values[128] < 0.6 * values[32]


def test_debug_flag_profile_is_slow_at_one_stream_and_fast_at_128() -> None:
    nograph = get_profile("sglang-nograph").params()
    fixed = get_profile("sglang").params()
    vllm = get_profile("vllm").params()
    assert per_stream_decode_tok_per_s(fixed, 1) / per_stream_decode_tok_per_s(nograph, 1) > 2.3
    assert stage_output_tok_per_s(nograph, 128) > stage_output_tok_per_s(vllm, 128)


def test_fingerprints_of_profiles() -> None:
    assert profile_names()[0] == "vllm"
    assert dict(get_profile("sglang-nograph").launch_args)["disable_cuda_graph"] is True
    assert dict(get_profile("sglang").launch_args)["disable_cuda_graph"] is False
    assert get_profile("vllm").engine == "vllm"


def test_impossible_targets_are_refused() -> None:
    profile = dataclasses.replace(get_profile("vllm"), targets=((1, 100.0), (128, 50.0)))
    with pytest.raises(ValueError, match="negative"):
        solve(profile)
    with pytest.raises(KeyError):
        get_profile("nope")


@pytest.mark.parametrize("profile", all_profiles(), ids=lambda p: p.name)
def test_every_profile_caches_prefixes_in_its_kv_pool_and_solves_as_without(profile: object) -> None:
    params = solve(profile)  # type: ignore[arg-type]
    assert params.prefix_cache_tokens == params.kv_budget_tokens
    fixed = profile.fixed  # type: ignore[attr-defined]
    uncached = dataclasses.replace(profile, fixed=dataclasses.replace(fixed, prefix_cache_tokens=0))
    assert dataclasses.replace(solve(uncached), prefix_cache_tokens=params.prefix_cache_tokens) == params


def test_the_eagle_profile_crosses_over_between_32_and_64_streams() -> None:
    vllm, eagle = get_profile("vllm").params(), get_profile("vllm-eagle3").params()
    ratio = {c: stage_output_tok_per_s(eagle, c) / stage_output_tok_per_s(vllm, c) for c in DEFAULT_SWEEP}
    assert ratio[1] == pytest.approx(2.0, abs=0.05)
    assert ratio[32] > 1.0 > ratio[64]
    assert ratio[128] == pytest.approx(0.85, abs=0.02)
    assert dict(get_profile("vllm-eagle3").launch_args)["speculative_config"]
