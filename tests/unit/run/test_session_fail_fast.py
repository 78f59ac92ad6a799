"""A session stops its run after its first requests all failed the same way, unless the run
accepts every failure (``--max-error-rate 1``): then every failure is measured."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from llmload.config.settings import ChecksConfig
from llmload.core.failfast import REQUESTS
from llmload.core.phases import Phase
from llmload.core.record import Outcome, RequestRecord
from llmload.core.stop import Stopped
from llmload.run.process_run import ProcessRun
from tests.support.session import config


def failed(i: int) -> RequestRecord:
    r = RequestRecord(f"r{i}", "u0", 0, Phase.MEASURE, "chat", True, scheduled_ns=i, sent_ns=i)
    r.outcome, r.status, r.error_detail = Outcome("http_5xx"), 500, "simulated server error"
    return r


def stops(tmp_path: Path, max_error_rate: float | None) -> list[Stopped]:
    cfg = dataclasses.replace(config(tmp_path), checks=ChecksConfig(max_error_rate=max_error_rate))
    session = ProcessRun(cfg)
    seen: list[Stopped] = []
    session.on_stop = seen.append
    try:
        for i in range(REQUESTS * 2):
            session._judge(failed(i))
    finally:
        session.close()
    return seen


@pytest.mark.parametrize("limit", [None, 0.0, 0.01, 0.99])
def test_a_run_that_checks_errors_stops_after_the_first_identical_failures(
    tmp_path: Path, limit: float | None
) -> None:
    [stop] = stops(tmp_path, limit)
    assert stop.by == "fail_fast" and stop.kind == "http_5xx" and stop.status == 500
    assert stop.requests == REQUESTS


def test_a_run_that_accepts_every_failure_is_never_stopped(tmp_path: Path) -> None:
    assert stops(tmp_path, 1.0) == []
