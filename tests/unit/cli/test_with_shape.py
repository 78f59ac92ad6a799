"""A sweep of a scenario without a load shape gets the sweep's: its plain users would run
until -t, and a sweep's stages would never come."""

from __future__ import annotations

from pathlib import Path

from llmload.scenarios import HERE, locate, with_shape


def test_a_scenario_without_a_shape_runs_with_the_sweeps() -> None:
    for name in ("agent", "chat", "conversation"):
        path = locate(name)
        assert with_shape(path) == f"{path},{HERE / 'shape.py'}"


def test_a_file_that_imports_or_defines_a_shape_runs_alone(tmp_path: Path) -> None:
    assert with_shape(locate("sweep")) == str(locate("sweep"))
    assert with_shape(locate("trace")) == str(locate("trace"))
    own = tmp_path / "own.py"
    own.write_text("from locust import LoadTestShape\n\nclass Steps(LoadTestShape):\n    pass\n")
    assert with_shape(own) == str(own)
