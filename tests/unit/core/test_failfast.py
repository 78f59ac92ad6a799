"""Fail fast: the first requests decide, once."""

from __future__ import annotations

from llmload.core.failfast import FailFast
from llmload.core.phases import Phase
from llmload.core.record import OK, UNFINISHED, Outcome, RequestRecord
from llmload.core.stop import stop_of


def record(outcome: str, status: int | None = None, detail: str = "") -> RequestRecord:
    r = RequestRecord(
        request_id="x", user="0", stage=0, phase=Phase.WARMUP, endpoint="chat", stream=True, scheduled_ns=0
    )
    r.outcome, r.status, r.error_detail = Outcome(outcome), status, detail
    return r


def test_twenty_identical_failures_stop_the_run_once() -> None:
    check = FailFast()
    stops = [check.observe(record("http_4xx", 400, "bad field")) for _ in range(25)]
    assert stops[:19] == [None] * 19
    assert stops[19] == stop_of(
        {
            "by": "fail_fast",
            "kind": "http_4xx",
            "status": 400,
            "message": "bad field",
            "requests": 20,
        }
    )
    assert stops[20:] == [None] * 5


def test_one_success_or_a_second_kind_disarms_it() -> None:
    for other in (record(OK, 200), record("http_4xx", 404), record("connect_error")):
        check = FailFast()
        check.observe(record("http_4xx", 400))
        check.observe(other)
        assert all(check.observe(record("http_4xx", 400)) is None for _ in range(40))


def test_unfinished_requests_do_not_count() -> None:
    check = FailFast(limit=2)
    assert check.observe(record(UNFINISHED)) is None
    assert check.observe(record("connect_error", None, "refused")) is None
    assert check.observe(record("connect_error", None, "refused")) is not None
