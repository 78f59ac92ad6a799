"""Options are declared once (``llmload.config.options``); everything that lists or sets them agrees,
and every field of the typed config is set by one option or says where its value comes from.

The Locust parser, ``llmload sweep|search``, docs/options.md and the Kubernetes manifests are
all held to the one declaration here, so none of them can drift from the code.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import is_dataclass
from pathlib import Path
from typing import get_type_hints

import configargparse  # type: ignore[import-untyped]
import pytest

from llmload.cli import search, sweep
from llmload.cli.list_options import markdown
from llmload.cli.locust_call import LocustCall
from llmload.config.args import DERIVED, add_options
from llmload.config.options import ENTRYPOINT_ENV, ENV_NAMES, OPTIONS, defaults, sweep_options
from llmload.config.settings import RunConfig

ROOT = Path(__file__).resolve().parents[3]


def locust_like_parser() -> configargparse.ArgumentParser:
    return configargparse.ArgumentParser(prog="locust")


def test_every_option_has_help_a_unique_flag_and_an_env_var() -> None:
    assert len({o.flag for o in OPTIONS}) == len(OPTIONS) == len(ENV_NAMES)
    for o in OPTIONS:
        assert o.help.strip() and o.flag.startswith("--") and o.env.startswith("LLMLOAD_"), o
        assert o.kind in (str, int, float, bool), o


def test_the_locust_parser_takes_every_option_from_the_command_line_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ENV_NAMES:  # the suite's own (LLMLOAD_HISTORY), or the shell's
        monkeypatch.delenv(name, raising=False)
    parser = locust_like_parser()
    add_options(parser)
    assert vars(parser.parse_args([])) == defaults()
    monkeypatch.setenv("LLMLOAD_MAX_TOKENS", "uniform:8:16")
    monkeypatch.setenv("LLMLOAD_IGNORE_EOS", "true")
    parsed = parser.parse_args(["--stage-s", "5", "--prefix-share", "0.5"])
    assert (parsed.max_tokens, parsed.ignore_eos, parsed.stage_s, parsed.prefix_share) == (
        "uniform:8:16",
        True,
        5.0,
        0.5,
    )


@pytest.mark.parametrize("module", [sweep, search])
def test_every_sweep_and_search_option_has_help(module: object) -> None:
    parser: argparse.ArgumentParser = module._parser()  # type: ignore[attr-defined]
    missing = [
        a.option_strings or [a.dest]
        for a in parser._actions
        if not a.help and not isinstance(a, argparse._HelpAction)
    ]
    assert missing == []
    shown = parser.format_help()
    assert all(o.flag in shown for o in sweep_options())


def test_a_sweep_passes_its_options_on_with_its_own_defaults() -> None:
    args = sweep._parser().parse_args(
        ["--sim", "vllm", "--levels", "1,4", "--max-tokens", "uniform:8:16", "--slo", "ttft_p99_ms<=200"]
    )
    command = LocustCall.parsed(args).command("http://127.0.0.1:9")
    locust = locust_like_parser()
    add_options(locust)
    locust.add_argument("-f")
    locust.add_argument("--headless", action="store_true")
    locust.add_argument("--host")
    locust.add_argument("--only-summary", action="store_true")
    locust.add_argument("--loglevel")
    parsed = locust.parse_args(command[3:])
    assert (parsed.levels, parsed.max_tokens, parsed.slo) == ("1,4", "uniform:8:16", "ttft_p99_ms<=200")
    # the sweep's defaults, not the locustfiles'
    assert (parsed.output_jitter, parsed.ignore_eos, parsed.max_error_rate) == (0.1, True, "1%")
    no_eos = sweep._parser().parse_args(["--sim", "vllm", "--no-ignore-eos"])
    assert "--ignore-eos" not in LocustCall.parsed(no_eos).command("http://127.0.0.1:9")


def test_docs_options_md_is_the_declaration() -> None:
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert markdown() in text, "regenerate with make docs"


def test_every_llmload_variable_in_the_manifests_is_an_option() -> None:
    found: dict[str, str] = {}
    for path in [*(ROOT / "k8s").rglob("*"), *(ROOT / "image").rglob("*")]:
        if path.is_file():
            for name in re.findall(r"LLMLOAD_[A-Z0-9_]*[A-Z0-9]", path.read_text(encoding="utf-8")):
                found.setdefault(name, str(path.relative_to(ROOT)))
    assert found, "the manifests set llmload's options through LLMLOAD_* variables"
    unknown = {name: where for name, where in found.items() if name not in ENV_NAMES | ENTRYPOINT_ENV}
    assert unknown == {}


def _leaves(cls: type, prefix: str = "") -> set[str]:
    """Every settable field of a config, by dotted path through its nested dataclasses."""
    out: set[str] = set()
    for name, hint in get_type_hints(cls).items():
        if isinstance(hint, type) and is_dataclass(hint):
            out |= _leaves(hint, f"{prefix}{name}.")
        else:
            out.add(f"{prefix}{name}")
    return out


def test_every_config_field_is_set_by_exactly_one_option_or_says_where_it_comes_from() -> None:
    set_by = [path for o in OPTIONS for path in o.fields]
    assert len(set_by) == len(set(set_by)), "two options set one field"
    assert set(set_by).isdisjoint(DERIVED)
    # an option without a field, or a field without an option, fails here
    assert _leaves(RunConfig) == set(set_by) | set(DERIVED)


def test_a_text_option_offers_the_choices_of_its_fields_literal() -> None:
    parser = locust_like_parser()
    add_options(parser)
    by_flag = {a.option_strings[0]: a for a in parser._actions if a.option_strings}
    assert by_flag["--arrival"].choices == ("constant", "poisson", "gamma")
    assert by_flag["--trace-format"].choices == ("mooncake", "azure", "jsonl", "auto")
    assert by_flag["--transport"].choices == ("lean", "httpx")
    assert by_flag["--image-format"].choices == ("png", "jpeg")
    with pytest.raises(SystemExit):
        parser.parse_args(["--arrival", "bursty"])
