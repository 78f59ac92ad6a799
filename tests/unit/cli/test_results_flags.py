"""The commands over results share one declaration of ``--format``, ``--baseline`` and the rest
(``config/commands.py``); each refuses, in one line naming the flag, a value it does not do."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload import cli
from llmload.config.commands import output_format


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["gate", "--format", "html"], "--format"),
        (["report", "RUN_DIR", "--format", "console"], "--format"),
        (["compare", "a", "b", "--baseline", "rolling:3"], "--baseline"),
        (["history", "--metric", "tok_per_s"], "--metric"),
    ],
)
def test_a_value_a_command_does_not_do_names_its_flag(
    argv: list[str], flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--history", str(tmp_path / "none.sqlite")] if argv[0] in ("gate", "history") else []
    assert cli.main([*argv, *store]) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith(f"llmload {argv[0]}: {flag}="), said


def test_the_short_format_names_still_mean_theirs() -> None:
    assert [output_format(t) for t in ("text", "md", "console", "markdown", "html")] == [
        "console",
        "markdown",
        "console",
        "markdown",
        "html",
    ]
