"""From options to prompts: specs parsed by to_config, WorkloadConfig checks, source composition."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.config.args import to_config
from llmload.config.asked import WorkloadConfig
from llmload.config.options import defaults
from llmload.errors import ConfigError
from llmload.run.sources import prompt_source
from llmload.workload.conversations import ConversationSpec
from llmload.workload.lengths import LogNormal, Normal, Uniform
from llmload.workload.prefixes import PrefixSpec, SharedPrefixes
from llmload.workload.prompts import OutputLengths, SyntheticPrompts


def options(**overrides: Any) -> argparse.Namespace:
    values = defaults()
    values.update(host="http://127.0.0.1:8000", num_users=4)
    values.update(overrides)
    return argparse.Namespace(**values)


def workload(**overrides: Any) -> WorkloadConfig:
    return to_config(options(**overrides)).workload


def test_defaults_are_fixed_lengths_without_prefixes() -> None:
    w = workload()
    assert (w.prompt_tokens, w.max_tokens, w.prompt_lengths, w.output_lengths) == (128, 128, None, None)
    assert w.prefix == PrefixSpec() and w.prefix.groups == 0
    assert w.conversation == ConversationSpec(turns=4, think_time_s=0.0)
    assert w.tokenize == "auto"  # the server's /tokenize where it has one (target/tokenize.py)
    assert isinstance(prompt_source(w), SyntheticPrompts)


def test_tokenize_auto_is_off_where_nothing_synthetic_is_built_to_length(tmp_path: Path) -> None:
    from llmload.config import values

    data = tmp_path / "d.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    assert [workload(tokenize=how).tokenize for how in ("auto", "off", "server")] == ["auto", "off", "server"]
    assert workload(dataset=str(data)).tokenize == workload(prefix_groups=2).tokenize == "off"
    assert values.tokenize("auto", argparse.Namespace(trace="t.jsonl")) == "off"
    with pytest.raises(ConfigError, match="give auto, off, server, or the path"):
        to_config(options(tokenize="nope"))
    with pytest.raises(ConfigError) as caught:  # asked for by name, it is still refused there
        to_config(options(tokenize="server", prefix_groups=2))
    assert caught.value.option == "--tokenize"


def test_distribution_specs_become_typed_lengths_with_their_upper_bound() -> None:
    w = workload(prompt_tokens="normal:128:32", max_tokens="uniform:64:256", max_length=4096)
    assert w.prompt_lengths == Normal(128.0, 32.0, 4096) and w.prompt_tokens == 4096
    assert w.output_lengths == Uniform(64, 256) and w.max_tokens == 256  # lost-worker bounds
    w = workload(max_tokens="lognormal:100:1:900")
    assert w.output_lengths == LogNormal(100.0, 1.0, 900) and w.max_tokens == 900


def test_summary_names_the_distribution() -> None:
    config = to_config(options(max_tokens="uniform:1:9", prefix_groups=2))
    public = orjson.loads(orjson.dumps(config.public_dict()))["workload"]
    assert public["output_lengths"] == {"kind": "uniform", "low": 1, "high": 9}
    assert public["prefix"] == {"groups": 2, "tokens": 512, "share": 1.0}


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"prompt_tokens": "normal:1"}, "--prompt-tokens"),
        ({"max_tokens": "uniform:9:1"}, "--max-tokens"),
        ({"max_tokens": "0"}, "--max-tokens"),
        ({"max_length": 0}, "--max-length"),
        ({"max_tokens": "uniform:1:9", "output_jitter": 0.1}, "--output-jitter"),
        ({"prefix_groups": -2}, "--prefix-groups"),
        ({"prefix_groups": 2, "prefix_tokens": 0}, "--prefix-tokens"),
        ({"prefix_share": 2.0}, "--prefix-share"),
        ({"prefix_groups": 2, "prefix_cache": True}, "--prefix-groups"),
        ({"turns": 0}, "--turns"),
        ({"think_time_s": -1.0}, "--think-time-s"),
    ],
)
def test_bad_workload_options_name_themselves(overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        to_config(options(**overrides))
    assert caught.value.option == option


def test_a_prompt_distribution_with_a_dataset_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    with pytest.raises(ConfigError) as caught:
        to_config(options(dataset=str(data), prompt_tokens="uniform:1:5"))
    assert caught.value.option == "--prompt-tokens"


def test_sources_compose_dataset_output_lengths_and_prefixes(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 7}\n')
    fixed = prompt_source(workload(dataset=str(data), max_tokens="50"))
    assert fixed.get(0, 0).max_tokens == 50
    drawn = prompt_source(workload(dataset=str(data), max_tokens="uniform:10:20", prefix_groups=2))
    assert isinstance(drawn, SharedPrefixes)
    prompts = [drawn.get(u, r) for u in range(4) for r in range(20)]
    assert {p.max_tokens for p in prompts} <= set(range(10, 21)) and len({p.max_tokens for p in prompts}) > 3
    assert {dict(p.labels)["group"] for p in prompts} == {"0", "1"}
    assert [m["role"] for m in prompts[0].messages] == ["system", "user"]


def test_synthetic_sources_draw_from_the_configured_distributions() -> None:
    source = prompt_source(workload(prompt_tokens="uniform:5:9", max_tokens="uniform:1:3"))
    prompts = [source.get(u, r) for u in range(10) for r in range(30)]
    assert {p.prompt_tokens_requested for p in prompts} == set(range(5, 10))
    assert {p.max_tokens for p in prompts} == {1, 2, 3}
    assert not isinstance(source, OutputLengths)


def test_length_warnings_name_what_to_do() -> None:
    import dataclasses

    from llmload.metrics.aggregate import StageStats
    from llmload.results.build import length_warnings
    from llmload.results.from_stats import stage_summary

    stage = stage_summary(
        StageStats(),
        index=0,
        concurrency=1,
        duration_s=1.0,
        client_health={},
        client_bound_by=(),
        warnings=(),
    )
    assert length_warnings(stage, ignore_eos=True, tokenize="off") == []
    off = dataclasses.replace(
        stage, prompt_tokens_counted_vs_requested=1.047, output_tokens_vs_max_tokens=0.6
    )
    prompt, output = length_warnings(off, ignore_eos=True, tokenize="off")
    assert "104.7%" in prompt and "--tokenize server" in prompt
    assert "ignore_eos" in output and "60.0%" in output
    (missed,) = length_warnings(off, ignore_eos=False, tokenize="server")
    assert "calibration missed" in missed
    # auto found no /tokenize: the server's tokenizer cannot be asked, a file can
    (words,) = length_warnings(off, ignore_eos=False, tokenize="off", asked="auto")
    assert "offers no /tokenize" in words and "--tokenize FILE" in words and "--tokenize server" not in words
    (unresolved,) = length_warnings(off, ignore_eos=False, tokenize="auto")  # the live view's
    assert "--tokenize FILE" in unresolved and "--tokenize server" not in unresolved
    near = dataclasses.replace(
        stage, prompt_tokens_counted_vs_requested=1.015, output_tokens_vs_max_tokens=0.99
    )
    assert length_warnings(near, ignore_eos=True, tokenize="off") == []
