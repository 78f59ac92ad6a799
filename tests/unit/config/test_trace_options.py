"""The trace options: checked against the file at start-up, and the replay's one stage."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import pytest

from llmload.config.args import to_config
from llmload.config.options import defaults
from llmload.errors import ConfigError
from llmload.locust.plans import trace_plan

TRACE = "".join(f'{{"t": {t}, "prompt_tokens": 20, "max_tokens": 4}}\n' for t in (0, 1, 2, 3, 4))


def options(trace: Path | None, **overrides: Any) -> argparse.Namespace:
    values = defaults()
    values.update(host="http://127.0.0.1:8000", num_users=1, trace=None if trace is None else str(trace))
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text(TRACE, encoding="utf-8")
    return path


def test_a_replay_is_one_stage_at_the_traces_rate_with_no_warm_up(trace: Path) -> None:
    config = to_config(options(trace, trace_speed=2.0, trace_window="1:"), scenario="trace")
    assert config.trace.replay.speed == 2.0 and config.trace.replay.start_s == 1.0
    assert config.public_dict()["trace"]["path"] == str(trace)
    plan = trace_plan(config)
    # entries 1..4: a pass of 4 mean gaps of 1 s, at twice the speed
    assert plan.window_s == pytest.approx(2.0) and plan.rate == pytest.approx(2.0)
    assert plan.warmup_target == 0 and plan.concurrency == config.open_loop.max_in_flight


def test_a_looped_replay_lasts_until_stopped(trace: Path) -> None:
    assert math.isinf(trace_plan(to_config(options(trace, trace_loop=True), scenario="trace")).window_s)


@pytest.mark.parametrize(
    ("overrides", "scenario", "option", "problem"),
    [
        ({}, "chat", "--trace", "needs the trace scenario"),
        ({"trace_format": "parquet"}, "trace", "--trace-format", "must be one of"),
        ({"trace_speed": 0.0}, "trace", "--trace-speed", "> 0"),
        ({"trace_window": "10:20"}, "trace", "--trace-window", "no requests"),
        ({"warmup_requests": 5}, "trace", "--warmup-requests", "no warm-up requests"),
        ({"requests": 50}, "trace", "--requests", "measures the trace's requests"),
    ],
)
def test_bad_trace_options_name_themselves(
    trace: Path, overrides: dict[str, Any], scenario: str, option: str, problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem) as info:
        to_config(options(trace, **overrides), scenario=scenario)
    assert info.value.option == option


def test_the_trace_scenario_asks_for_a_file() -> None:
    with pytest.raises(ConfigError, match="give --trace FILE"):
        to_config(options(None), scenario="trace")
