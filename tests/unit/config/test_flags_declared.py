"""Every flag a parser under ``src/`` takes is declared once, in ``config/options.py`` (what Locust
takes) or ``config/commands.py`` (what the commands take), and means the same to every command;
the simulated server's, a program of its own, in ``sim/flags.py``.

A flag declared by hand drifts: ``llmload demo`` once took ``--max-tokens`` as an int while
``llmload sweep`` took a distribution, and ``llmload wait`` called ``--timeout`` what the sweep
calls ``--wait-timeout``. So a parser may name a flag only through ``declare`` (or
``add_arguments`` over the table); ``add_argument`` with a flag string is a finding.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from llmload.cli import calibrate, compare, demo, gate, history, search, sweep, tune
from llmload.config.commands import COMMAND_OPTIONS, option_of
from llmload.config.options import OPTIONS
from llmload.export import report
from llmload.sim import cli as sim_cli
from llmload.sim.flags import SIM_FLAGS
from llmload.target import wait

SRC = Path(__file__).resolve().parents[3] / "src" / "llmload"


def _calls(path: Path) -> list[tuple[str, list[str], int]]:
    """Every ``add_argument``/``declare`` call of the module: its name, its literal strings, line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("add_argument", "declare"):
            words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            found.append((name, words, node.lineno))
    return found


def test_no_parser_declares_a_flag_itself() -> None:
    by_hand, unknown = [], []
    for path in sorted(SRC.rglob("*.py")):
        for name, words, line in _calls(path):
            for word in (w for w in words if w.startswith("-")):
                where = f"{path.relative_to(SRC)}:{line} {word}"
                if name == "add_argument":
                    by_hand.append(where)
                else:
                    try:
                        option_of(word)
                    except KeyError:
                        unknown.append(where)
    assert by_hand == [], "declare these in config/commands.py (or options.py) and use declare()"
    assert unknown == [], "these name no option of config/options.py or config/commands.py"


def test_each_flag_is_declared_once_over_both_tables() -> None:
    spelled = Counter(f for o in (*OPTIONS, *COMMAND_OPTIONS) for f in (o.flag, *o.aliases))
    assert [f for f, n in spelled.items() if n > 1] == []


def test_the_simulators_parser_is_its_table() -> None:
    spelled = Counter(f for o in SIM_FLAGS for f in (o.flag, *o.aliases))
    assert [f for f, n in spelled.items() if n > 1] == []
    taken = {f for action in sim_cli._parser()._actions for f in action.option_strings}
    assert taken - {"-h", "--help"} == set(spelled)


PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "demo": demo._parser,
    "sweep": sweep._parser,
    "search": search._parser,
    "tune": tune._parser,
    "wait": wait._parser,
    "calibrate": calibrate._parser,
    "compare": compare._parser,
    "report": report._parser,
    "history": history._parser,
    "history reindex": history._reindex_parser,
    "history pin": gate._pin_parser,
    "gate": gate._parser,
    "gate accept": gate._accept_parser,
}


def _shape(action: argparse.Action) -> tuple[object, ...]:
    """What a flag is to its parser, but for the command's own default."""
    text = re.sub(r" \(default [^)]*\)$", "", action.help or "")
    return (
        text,
        action.type,
        action.choices,
        type(action).__name__,
        action.metavar,
        tuple(action.option_strings),
    )


@pytest.mark.parametrize(
    "flag", sorted({f for o in (*OPTIONS, *COMMAND_OPTIONS) for f in (o.flag, *o.aliases)})
)
def test_a_flag_means_the_same_to_every_command(flag: str) -> None:
    shapes = {
        command: _shape(action)
        for command, build in PARSERS.items()
        for action in build()._actions
        if flag in action.option_strings
    }
    assert len(set(shapes.values())) <= 1, shapes


def test_the_simulators_documentation_names_every_flag() -> None:
    doc = (SRC.parents[1] / "docs" / "sim.md").read_text(encoding="utf-8")
    assert [f.flag for f in SIM_FLAGS if f"`{f.flag}" not in doc and f"{f.flag} " not in doc] == []
