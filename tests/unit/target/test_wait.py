"""The readiness wait on a fake clock: states as they change, stall, timeout, exit codes."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmload import cli
from llmload.target.wait import WaitCode, WaitResult, main, wait_ready

MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}
CHOICE = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]}
LOADING = {"error": {"message": "the model is loading", "code": 503}}


class Clock:
    """Time moves only when the wait sleeps, or when a handler says a request took time."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


Handler = Callable[[httpx.Request], httpx.Response]


def run(handler: Handler, clock: Clock, **kwargs: Any) -> tuple[WaitResult, str]:
    out = io.StringIO()
    client = httpx.Client(transport=httpx.MockTransport(handler))
    result = wait_ready("http://box:8000", out=out, clock=clock, sleep=clock.sleep, client=client, **kwargs)
    return result, out.getvalue()


def loading_server(clock: Clock) -> Handler:
    """Refused until t+2 s, 503 until t+4 s, models listed but generation 503 until t+6 s."""
    start = clock.t

    def handler(request: httpx.Request) -> httpx.Response:
        age = clock.t - start
        if age < 2:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        if age < 4:
            return httpx.Response(503, json=LOADING)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=MODELS)
        return httpx.Response(503 if age < 6 else 200, json=LOADING if age < 6 else CHOICE)

    return handler


def test_states_are_shown_as_they_change_and_ready_means_a_generation() -> None:
    clock = Clock()
    result, out = run(loading_server(clock), clock, timeout_s=60)
    assert result.code == WaitCode.READY
    states = [state for _, state in result.transitions]
    assert states == ["refused", "http_503", "models_listed", "ready"]
    assert [round(t) for t, _ in result.transitions] == [0, 2, 4, 6]
    lines = out.splitlines()
    assert len(lines) == 5  # one per change, then the verdict
    assert "http_503" in lines[1] and "the model is loading" in lines[1]
    assert "models_listed" in lines[2] and "generation: HTTP 503" in lines[2]
    assert lines[-1] == "llmload wait: ready after 6.0 s (m generated a token)"


def test_an_unchanged_state_is_repeated_every_ten_seconds() -> None:
    clock = Clock()
    result, out = run(lambda r: httpx.Response(503, json=LOADING), clock, timeout_s=30)
    assert result.code == WaitCode.TIMEOUT_WHILE_LOG_MOVING
    progress = [line for line in out.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in progress] == [
        "[    0.0 s",
        "[   10.0 s",
        "[   20.0 s",
        "[   30.0 s",
    ]
    assert "timed out after 30 s, still http_503" in out


def test_a_log_that_stops_changing_ends_the_wait_as_likely_hung(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("loading weights ... 0%\n")
    clock = Clock()
    result, out = run(
        lambda r: httpx.Response(503, json=LOADING), clock, timeout_s=900, log_file=str(log), log_stall_s=5
    )
    assert result.code == WaitCode.LOG_STALLED
    assert result.elapsed_s == pytest.approx(5.0)
    assert result.log_line == "loading weights ... 0%"
    assert out.splitlines()[-1] == (
        "llmload wait: the log has not changed for 5 s while the server is http_503: likely hung "
        "(newest line: 'loading weights ... 0%')"
    )


def test_a_moving_log_is_slow_loading_when_time_runs_out(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    clock = Clock()

    def handler(request: httpx.Request) -> httpx.Response:
        with log.open("a") as f:  # the server keeps logging progress, 10 bytes a look
            f.write(f"\rstep {int(clock.t):3d} ")
        return httpx.Response(503, json=LOADING)

    result, out = run(handler, clock, timeout_s=20, log_file=str(log), log_stall_s=3)
    assert result.code == WaitCode.TIMEOUT_WHILE_LOG_MOVING
    assert result.log_line == f"step {int(clock.t)}"
    assert "slow loading? raise --wait-timeout" in out


def test_a_missing_log_file_is_shown_and_its_creation_counts_as_a_change(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    clock = Clock()

    def handler(request: httpx.Request) -> httpx.Response:
        if clock.t - 1000.0 >= 3 and not log.exists():
            log.write_text("started\n")
        return httpx.Response(503, json=LOADING)

    result, out = run(handler, clock, timeout_s=900, log_file=str(log), log_stall_s=4)
    assert "does not exist" in out
    assert result.code == WaitCode.LOG_STALLED
    assert result.elapsed_s == pytest.approx(7.0)  # created at 3 s, then 4 s of silence


def test_connected_but_silent_is_no_answer_and_a_known_model_skips_the_listing() -> None:
    clock = Clock()
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if clock.t - 1000.0 < 1:
            raise httpx.ReadTimeout("timed out", request=request)
        if request.url.path == "/v1/models":
            return httpx.Response(404, json={"detail": "Not Found"})
        return httpx.Response(200, json=CHOICE)

    result, _ = run(handler, clock, timeout_s=10, model="given")
    assert [s for _, s in result.transitions] == ["no_answer", "ready"]
    assert seen[-2:] == ["/v1/models", "/v1/chat/completions"]


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2  # --host is required
    assert main(["--help"]) == 0
    assert cli.main(["wait", "--host", "gpu-box:8000"]) == 2
    assert "--host" in capsys.readouterr().err
    assert cli.main(["wait", "--host", "http://b:1", "--log-stall", "5"]) == 2
    assert cli.main(["wait", "--host", "http://b:1", "--timeout", "0"]) == 2


@pytest.mark.parametrize(
    ("status", "key", "said"),
    [
        (401, None, "the server wants an API key: export it in OPENAI_API_KEY, or in the variable"),
        (403, "sk-wrong-key-123456", "the server rejected the API key"),
    ],
)
def test_a_refused_key_ends_the_wait_at_once(status: int, key: str | None, said: str) -> None:
    # 401/403 is no loading state: waiting --timeout for a key that will not appear helps nobody.
    clock = Clock()
    result, out = run(
        lambda _r: httpx.Response(status, json={"error": {"message": "no"}}),
        clock,
        timeout_s=900,
        api_key=key,
    )
    assert result.code == WaitCode.REFUSED == 2
    assert clock.t - 1000.0 < 1  # not timing: the test's own fake clock
    assert said in result.message
    assert "sk-wrong" not in out
