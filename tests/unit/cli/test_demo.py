"""``llmload demo`` takes its options from the one table, as ``llmload sweep`` does."""

from __future__ import annotations

import argparse
import re

from llmload.cli import demo, sweep
from llmload.cli.processes import asked_of


def _declared(parser: argparse.ArgumentParser) -> dict[str, tuple[str, object]]:
    """Each flag's help (without the command's own default) and type, as --help shows them."""
    return {
        flag: (re.sub(r" \(default [^)]*\)$", "", a.help or ""), a.type)
        for a in parser._actions
        for flag in a.option_strings
    }


def test_the_demo_declares_its_flags_as_the_sweep_does() -> None:
    demo_flags, sweep_flags = _declared(demo._parser()), _declared(sweep._parser())
    shared = set(demo_flags) & set(sweep_flags) - {"-h", "--help"}
    assert {"--max-tokens", "--processes", "--locustfile", "--results-dir"} <= shared
    assert {f: demo_flags[f] for f in shared} == {f: sweep_flags[f] for f in shared}


def test_the_demo_takes_a_length_distribution() -> None:
    args = demo._parser().parse_args(["--max-tokens", "uniform:64:256", "--processes", "0"])
    assert args.max_tokens == "uniform:64:256" and args.processes == 0
    assert asked_of(vars(args)).tokens_per_request == 256  # what --processes auto plans by: the longest draw


def test_the_demo_keeps_its_own_defaults() -> None:
    args = demo._parser().parse_args([])
    assert (args.max_tokens, args.locustfile, args.users, args.run_time) == ("128", "chat", 32, "30s")
    assert args.processes is None  # auto
