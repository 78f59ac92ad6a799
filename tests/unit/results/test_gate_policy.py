"""A gate policy from TOML (results/gate_policy.py): every setting read, every wrong one named."""

from __future__ import annotations

import tomllib

import pytest

from llmload.errors import ConfigError
from llmload.results.gate_policy import DEFAULT_POLICY, Baseline, Direction, MetricRule, policy_of

POLICY = """
baseline = "main"
repeats = 5
alpha = 0.01
levels = [1, 32, "2.5/s"]

[metrics.output_tok_per_s]
min_effect = 0.02

[metrics.ttft_p99_ms]
min_effect = 0.1
"""


def test_a_policy_file_is_read_whole() -> None:
    policy = policy_of(tomllib.loads(POLICY), "gate.toml")
    assert policy.baseline == Baseline(pin="main") and (policy.repeats, policy.alpha) == (5, 0.01)
    assert policy.levels == ("1", "32", "2.5/s")
    assert policy.rules == (
        MetricRule("output_tok_per_s", 0.02, Direction.HIGHER),
        MetricRule("ttft_p99_ms", 0.1, Direction.LOWER),
    )
    assert policy.rules[1].min_requests == 459 and policy.rules[0].min_requests == 1
    assert policy_of({}, "empty.toml") == DEFAULT_POLICY
    assert Baseline.parse("rolling:7", "--baseline") == Baseline(rolling=7)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("basline = 'main'", "is not a gate setting"),
        ("repeats = 1", "needs 2 or more"),
        ("alpha = 0.7", "between 0 and 0.5"),
        ("baseline = 'rolling:0'", "N of 1 or more"),
        ("[metrics.error_rate]\nmin_effect = 0.1", "judged by each run's own verdict"),
        ("[metrics.tok]\nmin_effect = 0.1", "is not a gated metric"),
        ("[metrics.ttft_p50_ms]\nmin_effect = 3", "a share between 0 and 1"),
        ("[metrics.ttft_p50_ms]\nmin_effect = 0.1\ndirection = 'up'", "higher or lower"),
        ("levels = ['fast']", "users as a number"),
    ],
)
def test_a_wrong_setting_is_named_with_what_to_write(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        policy_of(tomllib.loads(text), "gate.toml")
