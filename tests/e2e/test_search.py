"""Issue 9's SLO search: bisection finds the simulator's analytic answer within one step."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from llmload.cli.search import bisect
from llmload.sim.model import per_stream_decode_tok_per_s
from llmload.sim.profiles import get_profile
from tests.e2e.conftest import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.timing]


def test_bisection_is_exact_on_a_monotone_predicate() -> None:
    calls: list[float] = []

    def passes(level: float) -> bool:
        calls.append(level)
        return level <= 37

    assert bisect(1, 256, passes, integer=True, tolerance=0) == (37, 38)
    assert len(calls) <= 2 + 8  # the ends, then log2(256) halvings
    assert bisect(40, 256, passes, integer=True, tolerance=0) == (None, 40)
    good, bad = bisect(1.0, 100.0, lambda r: r <= 12.5, integer=False, tolerance=0.05)
    assert good is not None and bad is not None and good <= 12.5 < bad and bad / good <= 1.05


def test_search_finds_the_analytic_concurrency_within_one_step(tmp_path: Path) -> None:
    limit_ms, tokens = 17.3, 32
    params = get_profile("vllm").params()
    analytic = max(
        c
        for c in range(1, 33)
        if 1000 / per_stream_decode_tok_per_s(params, c, output_tokens=tokens) <= limit_ms
    )
    command = [
        sys.executable,
        "-m",
        "llmload.cli",
        "search",
        "--sim",
        "vllm",
        "--slo",
        f"tpot_p50_ms<={limit_ms}",
        "--min",
        "1",
        "--max",
        "32",
        "--stage-s",
        "5",
        "--max-tokens",
        str(tokens),
        "--output-jitter",
        "0",
        "--results-dir",
        str(tmp_path),
    ]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = orjson.loads((tmp_path / "search.json").read_bytes())
    assert abs(result["highest_passing"] - analytic) <= 1
    assert result["lowest_failing"] == result["highest_passing"] + 1
