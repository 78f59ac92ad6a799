"""A slower engine by a known factor: a regression of known size, for the history's gate and
its benchmarks (docs/history.md). ``--slowdown`` stretches every step and prefill, so tok/s falls
by about 1 - 1/FACTOR; ``--prefill-slowdown`` stretches prefill alone, so TTFT rises and the
steps after it keep their pace."""

from __future__ import annotations

import argparse
import dataclasses

from llmload.errors import ConfigError
from llmload.sim.model import FixedTiming, ModelParams


def slower(
    args: argparse.Namespace, params: ModelParams, timing: FixedTiming | None
) -> tuple[ModelParams, FixedTiming | None]:
    """The engine ``--slowdown`` and ``--prefill-slowdown`` times slower."""
    for flag, factor in (("--slowdown", args.slowdown), ("--prefill-slowdown", args.prefill_slowdown)):
        if not 0.01 <= factor <= 100:
            raise ConfigError(flag, factor, "a factor between 0.01 and 100 (1.05: 5% slower)")
    step, prefill = args.slowdown, args.slowdown * args.prefill_slowdown
    params = dataclasses.replace(
        params,
        step_base_ns=round(params.step_base_ns * step),
        step_per_seq_ns=round(params.step_per_seq_ns * step),
        step_per_seq2_ns=round(params.step_per_seq2_ns * step),
        prefill_per_token_ns=round(params.prefill_per_token_ns * prefill),
    )
    if timing is not None:
        timing = dataclasses.replace(
            timing, ttft_ns=round(timing.ttft_ns * prefill), step_ns=round(timing.step_ns * step)
        )
    return params, timing
