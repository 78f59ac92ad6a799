"""Copies of the hand-made results directories (tests/fixtures/results), safe to write into."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    """engine-a (vLLM, 82.5 tok/s single-stream, timeseries.csv), engine-b (SGLang with CUDA
    graphs off, 27 tok/s, one client-bound stage), engine-c (SGLang + EAGLE-3, acceptance)."""
    out = {}
    for name in ("engine-a", "engine-b", "engine-c"):
        out[name] = Path(shutil.copytree(FIXTURES / name, tmp_path / name))
    return out
