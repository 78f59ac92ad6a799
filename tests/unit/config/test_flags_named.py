"""Every flag a message, a docstring or a help text under ``src/`` names is one a user can type.

An error that tells the user to pass ``--wait-timout``, or a help text that points at a flag
since renamed, sends them to a flag that does not exist. So every ``--word`` in a string of
``src/`` must be an option of llmload's tables (``config/options.py``, ``config/commands.py``,
``sim/flags.py``, aliases included), one of Locust's own, or another program's flag listed
below with the program it belongs to (an engine's flag a message quotes, a command a hint
suggests).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections import defaultdict
from pathlib import Path

from llmload.config.commands import COMMAND_OPTIONS
from llmload.config.options import OPTIONS
from llmload.sim.flags import SIM_FLAGS

SRC = Path(__file__).resolve().parents[3] / "src" / "llmload"
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")

# Flags of other programs that llmload's strings quote, by program.
OTHERS: dict[str, str] = {
    "--enable-chunked-prefill": "vLLM (an engine flag a gate's verdict names as a difference)",
    "--enable-prompt-tokens-details": "vLLM (what makes it report cached prompt tokens)",
    "--goodput": "vLLM's benchmark (the idea llmload's goodput shares)",
    "--otlp-traces-endpoint": "vLLM (where it sends its spans)",
    "--profiler-config": "vLLM (what makes it serve /start_profile)",
    "--no-cont-batching": "llama.cpp's llama-server",
    "--no-slots": "llama.cpp's llama-server",
    "--slot-save-path": "llama.cpp's llama-server",
    "--reranking": "llama.cpp's llama-server",
    "--ulimit": "docker run (the hint for a container's descriptor limit)",
    "--verify": "git rev-parse",
    "--quiet": "git rev-parse",
    "--before": "bench/hot_path_ab.py (a benchmark's command a note quotes)",
    "--update": "`llmload options --update` (make docs: the tables of docs/options.md)",
    "--no": "the prefix of the --no-X switches, as their docstrings speak of them",
    "--x": "flags.py's docstring: the shape of a hand-declared flag it forbids",
}


def _ours() -> set[str]:
    flags = set()
    for option in (*OPTIONS, *COMMAND_OPTIONS, *SIM_FLAGS):
        flags.add(option.flag)
        flags.update(option.aliases)
    return flags | _locusts()


def _locusts() -> set[str]:
    """Locust's own flags (passed on after ``--``), read from its parser's source: importing
    Locust would monkey-patch this process, which a unit test must not."""
    spec = importlib.util.find_spec("locust")
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).with_name("argument_parser.py").read_text(encoding="utf-8")
    flags = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            flags.update(
                a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")
            )
    assert "--headless" in flags, "Locust's parser was not read"
    return flags


def _named() -> dict[str, list[str]]:
    """Every ``--word`` in a string constant (f-strings' parts included) of ``src/``: where."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for match in FLAG.finditer(node.value):
                    found[f"--{match.group(1)}"].append(f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def test_every_flag_a_string_names_is_one_a_user_can_type() -> None:
    ours, named = _ours(), _named()
    assert len(named) > 100, "the sources' strings were not read"
    unknown = {flag: where for flag, where in named.items() if flag not in ours and flag not in OTHERS}
    assert unknown == {}, f"flags named in src/ that no table declares: {unknown}"


def test_another_programs_flag_is_not_also_ours() -> None:
    # A flag listed as another program's that llmload also declares would hide a typo of ours.
    assert sorted(set(OTHERS) & _ours()) == []


def test_a_listed_flag_is_still_named_somewhere() -> None:
    stale = sorted(set(OTHERS) - set(_named()))
    assert stale == [], f"OTHERS lists flags no string names any more: {stale}"
