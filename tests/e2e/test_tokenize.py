"""``--tokenize``: prompts built to the server's token count, against a simulator whose
tokenizer is not one token per word (``--tokens-per-word 1.3``, as real tokenizers count English).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmload.sim.process import start_sim
from llmload.workload.words import VOCABULARY
from tests.e2e.conftest import RunLocust

pytestmark = pytest.mark.e2e

FIXED = ["--ttft-ms", "5", "--step-ms", "2"]
SHORT = ("--max-tokens", "4", "--ignore-eos")


def ok(run: Any) -> list[dict[str, Any]]:
    return [r for r in run.records if r["outcome"] == "ok"]


def prompt_warnings(stage: dict[str, Any]) -> list[str]:
    return [w for w in stage["warnings"] if "prompt tokens asked" in w]


def test_server_tokenize_builds_prompts_to_the_servers_count(run_locust: RunLocust) -> None:
    with start_sim([*FIXED, "--tokens-per-word", "1.3"]) as sim:
        exact = run_locust(sim.url, "--prompt-tokens", "uniform:200:600", "--tokenize", "server", *SHORT,
                           users=2, run_time="3s")  # fmt: skip
        words = run_locust(sim.url, "--prompt-tokens", "400", *SHORT, users=2, run_time="3s")
    stage = exact.summary["stages"][0]
    assert stage["prompt_tokens_counted_vs_requested"] == pytest.approx(1, abs=0.02)
    assert prompt_warnings(stage) == []
    for r in ok(exact):  # each request, not only on average: the calibration is per word
        assert r["prompt_tokens"] == pytest.approx(r["prompt_tokens_requested"], rel=0.02), r
    # Without it, 400 words are 520 + 6 tokens there, and the stage says so.
    plain = words.summary["stages"][0]
    assert plain["prompt_tokens_counted_vs_requested"] == pytest.approx((520 + 6) / 400, abs=0.01)
    (warning,) = prompt_warnings(plain)
    assert "--tokenize server" in warning


def test_a_tokenizer_file_counts_as_the_server(run_locust: RunLocust, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="--tokenize FILE needs the tokenizers package")
    vocab = {"[UNK]": 0, **{word: i + 1 for i, word in enumerate(VOCABULARY)}}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))  # one token per word, as the simulator's default tokenizer
    with start_sim(FIXED) as sim:
        run = run_locust(
            sim.url, "--prompt-tokens", "100", "--tokenize", str(path), *SHORT, users=2, run_time="3s"
        )
    # the chat template's 6 tokens were measured by the probe request and left out of the words
    assert {r["prompt_tokens"] for r in ok(run)} == {100}
    assert prompt_warnings(run.summary["stages"][0]) == []


def test_a_tokenizer_file_that_is_not_there_stops_the_run_with_what_to_give(
    run_locust: RunLocust, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.json"
    with start_sim(FIXED) as sim:
        run = run_locust(
            sim.url, "--tokenize", str(missing), *SHORT, users=1, run_time="2s", expect_code=None
        )
    assert run.returncode != 0
    assert "--tokenize=" in run.output and "give off, server, or the path of a tokenizer.json" in run.output
