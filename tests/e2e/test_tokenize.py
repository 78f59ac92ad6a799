"""``--tokenize``: prompts built to the server's token count, against a simulator whose
tokenizer is not one token per word (``--tokens-per-word 1.3``, as real tokenizers count English);
``auto``, the default, as ``server`` where the simulator serves ``/tokenize`` and as ``off``
where it does not (``--no-tokenize-route``), decided by every process of a distributed run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.sim.process import start_sim
from llmload.workload.words import VOCABULARY
from tests.e2e.conftest import RunLocust

pytestmark = pytest.mark.e2e

FIXED = ["--ttft-ms", "5", "--step-ms", "2"]
SHORT = ("--max-tokens", "4", "--ignore-eos")


def ok(run: Any) -> list[dict[str, Any]]:
    """Every process's ok requests: requests.jsonl, or one file per worker when distributed."""
    files = sorted(run.results.glob("requests*.jsonl"))
    records = [orjson.loads(line) for path in files for line in path.read_bytes().splitlines() if line]
    return [r for r in records if r["outcome"] == "ok"]


def prompt_warnings(stage: dict[str, Any]) -> list[str]:
    return [w for w in stage["warnings"] if "prompt tokens asked" in w]


def test_server_tokenize_builds_prompts_to_the_servers_count(run_locust: RunLocust) -> None:
    with start_sim([*FIXED, "--tokens-per-word", "1.3"]) as sim:
        exact = run_locust(sim.url, "--prompt-tokens", "uniform:200:600", "--tokenize", "server", *SHORT,
                           users=2, run_time="3s")  # fmt: skip
        # the default (auto) is server here, asked by each worker of a distributed run itself
        auto = run_locust(sim.url, "--prompt-tokens", "uniform:200:600", *SHORT, "--processes", "2",
                          users=2, run_time="3s", tokenize=None)  # fmt: skip
        words = run_locust(
            sim.url, "--prompt-tokens", "400", "--tokenize", "off", *SHORT, users=2, run_time="3s"
        )
    assert len(list(auto.results.glob("requests-worker-*.jsonl"))) == 2
    for run in (exact, auto):
        stage = run.summary["stages"][0]
        assert stage["prompt_tokens_counted_vs_requested"] == pytest.approx(1, abs=0.02)
        assert prompt_warnings(stage) == []
        for r in ok(run):  # each request, not only on average: the calibration is per word
            assert r["prompt_tokens"] == pytest.approx(r["prompt_tokens_requested"], rel=0.02), r
        assert run.summary["run"]["reproducibility"]["tokenize"] == "server"  # what was chosen
    assert auto.summary["run"]["options"]["workload"]["tokenize"] == "auto"  # what was asked
    assert not [w for w in auto.summary["warnings"] if "tokenize" in w]
    # Without it, 400 words are 520 + 6 tokens there, and the stage says so.
    plain = words.summary["stages"][0]
    assert plain["prompt_tokens_counted_vs_requested"] == pytest.approx((520 + 6) / 400, abs=0.01)
    (warning,) = prompt_warnings(plain)
    assert "--tokenize server" in warning
    assert words.summary["run"]["reproducibility"]["tokenize"] == "off"


def test_auto_without_a_tokenize_route_builds_words_and_says_nothing(run_locust: RunLocust) -> None:
    # A gateway or a hosted API has no /tokenize: the default falls back to words, quietly, in
    # the master (which records the choice) and in each worker (which builds the prompts).
    with start_sim([*FIXED, "--no-tokenize-route"]) as sim:
        run = run_locust(sim.url, "--prompt-tokens", "400", *SHORT, "--processes", "2",
                         users=2, run_time="3s", tokenize=None)  # fmt: skip
    summary = run.summary
    assert summary["run"]["options"]["workload"]["tokenize"] == "auto"
    assert summary["run"]["reproducibility"]["tokenize"] == "off"
    records = ok(run)
    assert records and {r["prompt_tokens"] for r in records} == {400 + 6}  # words, and the template's 6
    stage = summary["stages"][0]
    said = [*summary["warnings"], *stage["warnings"], *run.output.splitlines()]
    assert not [w for w in said if "-tokenize" in w or "/tokenize" in w or "prompt tokens" in w], said


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
    assert (
        "--tokenize=" in run.output
        and "give auto, off, server, or the path of a tokenizer.json" in run.output
    )
