"""The verdict from a summary: one line, the code, and the server's own words as evidence."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from llmload.config.settings import ChecksConfig
from llmload.results.exitcodes import ExitCode
from llmload.results.summary import Summary, to_json
from llmload.results.verdict import hint, judge, server_message
from tests.support import summaries

CHECKS = ChecksConfig(max_error_rate=0.01)


def stage(
    index: int = 0,
    *,
    ok: int = 0,
    failed: int = 0,
    unfinished: int = 0,
    errors: dict[str, int] | None = None,
    samples: dict[str, Any] | None = None,
    attempts: dict[str, Any] | None = None,
    partial: bool = False,
    duration_s: float = 0.0,
) -> dict[str, Any]:
    errors = errors or {}
    attempted = ok + failed + unfinished
    return {
        "index": index,
        "concurrency": 4,
        "requests": {"ok": ok, "failed": failed, "unfinished": unfinished, "warmup": 4, "drain": 0},
        "errors": errors,
        "error_rate": failed / attempted if attempted else None,
        "attempts": attempts
        or {"finished": ok + failed, "failed": failed, "unfinished": unfinished, "errors": errors},
        "error_samples": samples or {},
        "client_bound": False,
        "partial": partial,
        "duration_s": duration_s,
    }


def summary(*stages: dict[str, Any], stopped: dict[str, Any] | None = None, key_set: bool = False) -> Summary:
    return summaries.summary(
        *stages,
        complete=stopped is None,
        stopped=stopped,
        options={"request": {"api_key_set": key_set, "api_key_env": "MY_KEY"}},
    )


def test_a_clean_run_is_ok_in_one_line() -> None:
    verdict = judge(summary(stage(ok=120)), CHECKS)
    assert verdict.code is ExitCode.OK and verdict.ok
    assert verdict.line == "ok: every check passed (1 stage, 120 measured requests)"
    assert to_json(verdict.to_exit())["errors"] == []


def test_every_request_failing_fails_the_run_and_quotes_the_server() -> None:
    body = '{"error":{"message":"simulated server error","type":"InternalServerError","code":500}}'
    s = summary(
        stage(failed=239, errors={"http_5xx": 239}, samples={"http_5xx": {"status": 500, "message": body}})
    )
    verdict = judge(s, CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START  # stopped by fail-fast or not: no answer
    assert verdict.line == (
        'every request failed: HTTP 500 "simulated server error" — the server '
        "failed: see its log (239 requests)"
    )
    assert [(e.kind, e.count, e.status, e.message) for e in verdict.errors] == [
        ("http_5xx", 239, 500, "simulated server error")
    ]


def test_max_error_rate_1_accepts_anything_but_a_run_without_one_answer() -> None:
    s = summary(stage(ok=1, failed=10, errors={"http_5xx": 10}))
    assert judge(s, ChecksConfig(max_error_rate=1.0)).code is ExitCode.OK


def test_fail_fast_names_the_kind_the_status_the_message_and_what_to_do() -> None:
    stopped = {
        "by": "fail_fast",
        "kind": "http_4xx",
        "status": 400,
        "requests": 20,
        "message": '{"error": {"message": "unknown field \'foo\'"}}',
    }
    verdict = judge(summary(stage(), stopped=stopped), CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line == (
        "every request failed: HTTP 400 \"unknown field 'foo'\" — check "
        "--extra-body, --model and the prompt and output lengths (stopped "
        "after the first 20 requests)"
    )


@pytest.mark.parametrize(
    ("key_set", "said"),
    [
        (False, "the server wants an API key: export MY_KEY=..."),
        (True, "the server rejected the API key in $MY_KEY"),
    ],
)
def test_unauthorised_names_the_key(key_set: bool, said: str) -> None:
    stopped = {"by": "fail_fast", "kind": "http_4xx", "status": 401, "requests": 20, "message": ""}
    verdict = judge(summary(stage(), stopped=stopped, key_set=key_set), CHECKS)
    assert said in verdict.line and "--model" not in verdict.line


def test_interrupted_wins_and_names_the_stage_it_cut() -> None:
    s = summary(stage(ok=30), stage(1, ok=3, partial=True), stopped={"by": "interrupt", "stage": 1})
    verdict = judge(s, ChecksConfig(max_error_rate=0.0))
    assert verdict.code is ExitCode.INTERRUPTED == 130
    assert verdict.line.startswith("interrupted (SIGINT or SIGTERM)")
    assert "stage 1 (C=4) cut short" in verdict.line


@pytest.mark.parametrize(
    ("attempts", "said"),
    [
        ({"finished": 0, "failed": 0, "unfinished": 0}, "no request was sent"),
        (
            {"finished": 0, "failed": 0, "unfinished": 8},
            "8 requests were sent and none finished before the run ended: the server at "
            "http://127.0.0.1:9 never answered them",
        ),
        ({"finished": 3, "failed": 0, "unfinished": 0}, "the warm-up never completed (3 requests finished)"),
    ],
)
def test_nothing_measured_says_why(attempts: dict[str, Any], said: str) -> None:
    verdict = judge(summary(stage(attempts=attempts)), CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line.startswith("nothing measured: " + said)


def test_a_window_shorter_than_one_request_is_named_as_such() -> None:
    """Seen against llama.cpp's llama-server on one CPU thread: 4 users, 7.3 s per request,
    -t 12s; the window opened after 8.6 s and no user was free to send a request in it."""
    s = summary(stage(attempts={"finished": 8, "failed": 0, "unfinished": 0}, duration_s=3.4))
    verdict = judge(s, CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line == (
        "nothing measured: the measured window lasted 3.4 s and no request was sent inside it "
        "(the 8 that finished were sent during the warm-up): run longer (-t) so the window "
        "holds whole requests"
    )


def test_few_requests_that_all_failed_are_named_as_such() -> None:
    attempts = {"finished": 5, "failed": 5, "unfinished": 0, "errors": {"stream_broken": 5}}
    s = summary(
        stage(attempts=attempts, samples={"stream_broken": {"status": 200, "message": "<html>hi</html>"}})
    )
    verdict = judge(s, CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line == (
        'every request failed: stream_broken "an HTML page, not an OpenAI '
        "answer\" — the answer was no OpenAI event stream: is --host the API's "
        "base URL? (--no-stream for a server that cannot stream) (5 requests)"
    )


def test_accepting_every_error_rate_still_fails_a_run_without_one_answer() -> None:
    # --max-error-rate 1 turns fail-fast off, so the run goes on: its window holds only failures.
    s = summary(
        stage(
            failed=9,
            errors={"http_5xx": 9},
            samples={"http_5xx": {"status": 500}},
            attempts={"finished": 13, "failed": 13, "unfinished": 0, "errors": {"http_5xx": 13}},
        )
    )
    verdict = judge(s, dataclasses.replace(CHECKS, max_error_rate=1.0))
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line.startswith("every request failed: HTTP 500")
    assert verdict.line.endswith("the server failed: see its log (13 requests)")
    assert (
        judge(
            summary(stage(ok=1, failed=9, errors={"http_5xx": 9})),
            dataclasses.replace(CHECKS, max_error_rate=1.0),
        ).code
        is ExitCode.OK
    )


def test_server_message_reads_the_shapes_servers_use() -> None:
    assert server_message('{"error": {"message": "bad  \\n key"}}') == "bad key"
    assert server_message('{"detail": "Not Found"}') == "Not Found"
    assert server_message('{"error": "plain"}') == "plain"
    assert server_message("<!DOCTYPE html><html>") == "an HTML page, not an OpenAI answer"
    assert server_message("x" * 500).endswith("...") and len(server_message("x" * 500)) == 120
    assert server_message(None) == ""


def test_every_kind_has_a_hint() -> None:
    run = summaries.summary(target="http://h:1").run
    for kind in (
        "connect_error",
        "connect_timeout",
        "first_token_timeout",
        "stall_timeout",
        "total_timeout",
        "stream_broken",
        "bad_payload",
        "error_event",
    ):
        assert hint(kind, None, run)
    assert "nothing accepted a connection at http://h:1" in hint("connect_error", None, run)
    assert "rate-limiting" in hint("http_429", 429, run)


def test_an_interrupted_worker_is_named() -> None:
    stopped = {"by": "interrupt", "stage": 0, "process": "worker-1"}
    verdict = judge(summary(stage(ok=30, partial=True), stopped=stopped), CHECKS)
    assert verdict.code is ExitCode.INTERRUPTED
    assert verdict.line.startswith("interrupted: worker-1 was stopped by SIGINT or SIGTERM")


@pytest.mark.parametrize(("process", "said"), [(None, ""), ("worker-1", "worker-1: ")])
def test_a_run_refused_at_its_start_could_not_start_in_its_own_words(process: str | None, said: str) -> None:
    line = "http://h:1/v1/models: HTTP 401: the server wants an API key"
    stopped = {"by": "refused", "line": line, "process": process}
    verdict = judge(summary(stopped=stopped), CHECKS)
    assert verdict.code is ExitCode.COULD_NOT_START
    assert verdict.line == f"could not start: {said}{line}" and verdict.reasons == (verdict.line,)
