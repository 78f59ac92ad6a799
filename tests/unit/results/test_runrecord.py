"""A run's record in the results store is read from its summary alone (docs/history.md): every
number is the summary's own, under the name stages.csv gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload.export.rundata import read_summary
from llmload.export.tables import stage_row
from llmload.results.runrecord import METRICS, record_of, unix_time
from tests.support.summaries import summary

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def test_a_sweep_is_recorded_stage_by_stage_repeats_apart() -> None:
    s = read_summary(FIXTURES / "engine-a")
    record = record_of(s, "/results/engine-a")
    assert (record.run_id, record.results_dir) == ("20250601-100000-aaaa", "/results/engine-a")
    assert [(st.index, st.level, st.repeat) for st in record.stages] == [
        (0, "1", 0),
        (1, "1", 1),
        (2, "8", 0),
        (3, "32", 0),
        (4, "128", 0),
        (5, "128", 1),
    ]
    for stage, kept in zip(s.stages, record.stages, strict=True):
        row = stage_row(stage)
        assert {m: kept.metric(m) for m in METRICS} == {m: row[m] for m in METRICS}
        assert (kept.requests_ok, kept.requests_failed, kept.client_bound) == (
            stage.requests.ok,
            stage.requests.failed,
            stage.client_bound,
        )
    assert (record.single_stream_tok_per_s, record.peak_tok_per_s, record.peak_concurrency) == (
        82.5,
        1536.0,
        128,
    )


def test_the_server_client_and_verdict_are_the_summarys() -> None:
    record = record_of(read_summary(FIXTURES / "engine-a"), "/r")
    assert (record.server.engine, record.server.version, record.server.name) == (
        "vllm",
        "0.11.0",
        "vllm 0.11.0",
    )
    assert record.server.models == ("meta-llama/Llama-3.1-8B-Instruct",)
    assert record.server.launch_args == {
        "enforce_eager": False,
        "max_num_seqs": 256,
        "tensor_parallel_size": 1,
    }
    # a version 1 summary kept only the short revision; its verdict is judged when it is read
    assert (record.client.version, record.client.git_commit) == ("0.1.0", "abc1234")
    assert (record.exit_code, record.verdict, record.complete) == (0, "ok", True)
    assert record.started_s == unix_time("2025-06-01T10:00:00+0000") == 1748772000.0


def test_the_runs_labels_and_those_added_later_the_later_winning() -> None:
    s = summary(
        options={"history": {"enabled": True, "path": None, "labels": {"image": "a", "hardware": "h100"}}}
    )
    assert record_of(s, "/r").labels == (("image", "a"), ("hardware", "h100"))
    record = record_of(s, "/r", {"image": "b", "team": "x"})
    assert record.labels == (("image", "b"), ("hardware", "h100"), ("team", "x"))
    assert record.key.hardware == "h100"


def test_a_run_with_nothing_measured_is_still_a_record() -> None:
    record = record_of(summary({"ttft_ms": None}, complete=False), "/r")
    assert record.started_s is None and record.complete is False and record.exit_code is None
    assert record.stages[0].ttft_p99_ms is None and record.single_stream_tok_per_s is None


def test_the_clients_commit_and_host_from_a_current_summary() -> None:
    repro = {"llmload": "0.2.0", "git_revision": "0123456", "git_commit": "0123456789" * 4, "host": "ci-7"}
    client = record_of(summary(reproducibility=repro), "/r").client
    assert (client.version, client.git_commit, client.host) == ("0.2.0", "0123456789" * 4, "ci-7")


@pytest.mark.parametrize("stamp", [None, "", "yesterday"])
def test_a_start_that_is_no_time_is_none(stamp: str | None) -> None:
    assert unix_time(stamp) is None
