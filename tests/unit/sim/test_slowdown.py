"""A slower engine by a known factor (sim/slowdown.py): every step time, or the prefill alone."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.sim.cli import config_from_args


def test_slowdown_stretches_every_step_and_prefill_slowdown_the_prefill_alone() -> None:
    base = config_from_args([]).params
    slow = config_from_args(["--slowdown", "1.05"]).params
    assert slow.step_base_ns == round(base.step_base_ns * 1.05)
    assert slow.step_per_seq_ns == round(base.step_per_seq_ns * 1.05)
    assert slow.prefill_per_token_ns == round(base.prefill_per_token_ns * 1.05)
    prefill = config_from_args(["--prefill-slowdown", "1.1"]).params
    assert (prefill.step_base_ns, prefill.prefill_per_token_ns) == (
        base.step_base_ns,
        round(base.prefill_per_token_ns * 1.1),
    )
    fixed = config_from_args(["--ttft-ms", "20", "--step-ms", "10", "--slowdown", "1.1"]).timing
    assert fixed is not None and (fixed.ttft_ns, fixed.step_ns) == (22_000_000, 11_000_000)


def test_a_factor_out_of_range_is_named() -> None:
    with pytest.raises(ConfigError, match="--slowdown"):
        config_from_args(["--slowdown", "0"])
