"""The experiment's [quality] table: probes given inline, from a file or by default, and every
mistake named by its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload.config.experiment import parse_experiment
from llmload.config.quality import DEFAULT_PROBES, drift_limit, parse_quality
from llmload.errors import ConfigError


def test_defaults_and_inline_probes(tmp_path: Path) -> None:
    q = parse_quality({}, tmp_path)
    assert (q.probes, q.max_tokens, q.max_answer_drift) == (DEFAULT_PROBES, 32, None)
    q = parse_quality({"probes": ["2+2?"], "max_tokens": 8, "max_answer_drift": "10%"}, tmp_path)
    assert (q.probes, q.max_tokens, q.max_answer_drift) == (("2+2?",), 8, 0.1)


def test_probes_from_a_file_next_to_the_experiment(tmp_path: Path) -> None:
    (tmp_path / "probes.txt").write_text("first?\n\n  second?  \n")
    assert parse_quality({"probes_file": "probes.txt"}, tmp_path).probes == ("first?", "second?")


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"probes": []}, "quality.probes"),
        ({"probes": "one"}, "quality.probes"),
        ({"probes": ["a"], "probes_file": "p.txt"}, "quality.probes"),
        ({"probes_file": "missing.txt"}, "quality.probes_file"),
        ({"max_tokens": 0}, "quality.max_tokens"),
        ({"max_answer_drift": 2}, "quality.max_answer_drift"),
        ({"max_answer_drift": "some"}, "quality.max_answer_drift"),
        ({"probe": ["a"]}, "quality.probe"),
    ],
)
def test_mistakes_name_their_key(tmp_path: Path, data: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_quality(data, tmp_path)
    assert info.value.option == key


def test_an_experiment_without_the_table_asks_no_probes() -> None:
    base = {"server": {"command": "serve --port {port}"}, "grid": {"np": [1, 2]}}
    assert parse_experiment(base, name="x").quality is None
    assert parse_experiment({**base, "quality": {}}, name="x").quality is not None
    assert drift_limit(0.25, "--max-answer-drift") == 0.25
