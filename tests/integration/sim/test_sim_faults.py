"""Every fault mode, seen on the wire by a raw HTTP client, and recorded in the ground truth."""

from __future__ import annotations

import itertools
import json
import time

import pytest

from llmload.sim.faults import FaultMode
from llmload.sim.process import SimProcess
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat
from tests.support.wire import Response, chat_body, connect, exchange, read_response, request_bytes

pytestmark = pytest.mark.integration

CHAT = "/v1/chat/completions"


def _faulted(
    sim: SimProcess, mode: str, *, stream: bool = True, headers: dict[str, str] | None = None
) -> Response:
    body = chat_body(8, stream=stream)
    return exchange(sim.port, CHAT, body, headers={"x-sim-fault": mode, **(headers or {})}, timeout_s=3)


def _outcome(sim: SimProcess, response_id: str | None = None) -> dict[str, object]:
    entries = sim.requests()
    if response_id is None:
        return entries[-1]
    return next(e for e in entries if e["id"] == response_id)


def test_every_mode_has_a_test() -> None:
    tested = {name.removeprefix("test_") for name in globals()}
    assert {m.value for m in FaultMode} <= tested


def test_refuse(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "refuse")
    assert response.raw == b""
    assert response.end in {"eof", "reset"}
    assert _outcome(fast_sim)["outcome"] == "fault:refuse"


def test_reset(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "reset")
    assert (response.raw, response.end) == (b"", "reset")


def test_reset_mid_stream(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "reset_mid_stream")
    assert response.status == 200
    assert response.end == "reset"
    assert 1 <= len(response.chunks()) < 8
    assert "[DONE]" not in response.events()


def test_reset_mid_stream_non_streamed(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "reset_mid_stream", stream=False)
    assert response.end == "reset"
    assert len(response.body) < int(response.headers["content-length"])


@pytest.mark.timing
def test_stall_first(fast_sim: SimProcess, judge: Judge) -> None:
    judge.during(t0 := time.perf_counter_ns())
    with connect(fast_sim.port) as sock:
        sent = time.perf_counter_ns()
        headers = {"x-sim-fault": "stall_first", "x-sim-stall-ms": "300"}
        sock.sendall(request_bytes(CHAT, chat_body(4), headers=headers))
        response = read_response(sock, 3)
    assert response.complete
    head_ms = (response.reads[0][0] - sent) / 1e6
    token_reads = [t for t, data in response.reads if b'"content":" ' in data]
    judge.server(fast_sim.stats(t0))
    # The head goes out as the request is read, before the stall: the simulator's own work on a
    # request (0.7 ms here) and a loopback trip (the old 100 ms was room for a busy machine).
    judge.at_most(head_ms, 2, Stat.EVERY, "headers sent at once, before the stall")
    assert (token_reads[0] - sent) / 1e6 >= 300  # not timing: a floor (the stall), noise only lengthens
    assert _outcome(fast_sim)["outcome"] == "fault:stall_first"


@pytest.mark.timing
def test_stall_mid(fast_sim: SimProcess, judge: Judge) -> None:
    judge.during(t0 := time.perf_counter_ns())
    response = _faulted(fast_sim, "stall_mid", headers={"x-sim-stall-ms": "300", "x-sim-fault-after": "2"})
    assert response.complete
    stamps = [t for t, data in response.reads if b'"content":" ' in data]
    gaps_ms = [(b - a) / 1e6 for a, b in itertools.pairwise(stamps)]
    judge.server(fast_sim.stats(t0))
    # The stall (300 ms) starts at a step that writes nothing (5 ms) and ends at the first step
    # of the grid after it: 305 to 310 ms, so 305 within one step. A late read before it
    # shortens the gap, one after lengthens it.
    judge.close(max(gaps_ms), 305, 5, Stat.EVERY, "the gap of the stall")
    judge.close(sorted(gaps_ms)[len(gaps_ms) // 2], 5, 1, Stat.MEDIAN, "the other gaps, one step")


def _check_http_error(fast_sim: SimProcess, mode: str, status: int) -> None:
    response = _faulted(fast_sim, mode)
    assert response.status == status
    assert response.complete
    assert "error" in json.loads(response.body)
    if status == 429:
        assert response.headers["retry-after"] == "1"
    assert _outcome(fast_sim)["outcome"] == f"fault:{mode}"


def test_http_429(fast_sim: SimProcess) -> None:
    _check_http_error(fast_sim, "http_429", 429)


def test_http_400(fast_sim: SimProcess) -> None:
    _check_http_error(fast_sim, "http_400", 400)


def test_http_500(fast_sim: SimProcess) -> None:
    _check_http_error(fast_sim, "http_500", 500)


def test_close_no_done(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "close_no_done")
    assert response.complete, "the chunked body ends cleanly"
    assert "[DONE]" not in response.events()
    assert sum(len(c["choices"][0]["delta"].get("content", "").split()) for c in response.chunks()) == 8


def test_close_mid_body(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "close_mid_body")
    assert response.end == "eof"
    assert not response.complete
    assert 1 <= len(response.chunks()) < 9


def test_bad_framing(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "bad_framing")
    assert response.framing_error is not None
    assert "zz" in response.framing_error


def test_bad_sse(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "bad_sse")
    assert response.complete
    bad = [line for line in response.lines() if not line.startswith("data: ")]
    assert bad, "an event line without the data field"
    assert response.events()[-1] == "[DONE]"


def test_bad_json(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "bad_json")
    assert response.complete
    broken = []
    for event in response.events():
        try:
            json.loads(event)
        except ValueError:
            broken.append(event)
    assert broken and broken != ["[DONE]"]


def test_bad_json_non_streamed(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "bad_json", stream=False)
    assert response.complete
    with pytest.raises(ValueError):
        json.loads(response.body)


def test_error_event(fast_sim: SimProcess) -> None:
    response = _faulted(fast_sim, "error_event")
    assert response.complete
    errors = [json.loads(e) for e in response.events() if e.startswith('{"error"')]
    assert errors and errors[0]["error"]["code"] == 500
    assert response.events()[-1] == "[DONE]"


@pytest.mark.timing
def test_slow_drip(fast_sim: SimProcess, judge: Judge) -> None:
    judge.during(t0 := time.perf_counter_ns())
    with connect(fast_sim.port) as sock:
        sock.sendall(request_bytes(CHAT, chat_body(4), headers={"x-sim-fault": "slow_drip"}))
        response = read_response(sock, 0.55)
    judge.server(fast_sim.stats(t0))
    assert response.end == "timeout"
    assert b"HTTP/1.1 200".startswith(response.raw)
    # One byte per 100 ms: the reads (a byte each, or two after a late read) are 100 ms apart,
    # within the simulator's sleep (uvloop's timers round up to the millisecond) and its write.
    # not timing: two of the five or six bytes of the 0.55 s read, to take a gap from
    assert len(response.reads) >= 2
    gaps_ms = [(b - a) / 1e6 / len(data) for (a, _), (b, data) in itertools.pairwise(response.reads)]
    judge.close(sorted(gaps_ms)[len(gaps_ms) // 2], 100, 2, Stat.MEDIAN, "the drip's pace per byte")


def test_fault_by_body_field(fast_sim: SimProcess) -> None:
    response = exchange(fast_sim.port, CHAT, chat_body(4, sim_fault="http_500"))
    assert response.status == 500


def test_unknown_fault_is_a_400(fast_sim: SimProcess) -> None:
    response = exchange(fast_sim.port, CHAT, chat_body(4), headers={"x-sim-fault": "nope"})
    assert response.status == 400
    assert _outcome(fast_sim)["outcome"] == "rejected"


def _statuses(sim: SimProcess, n: int) -> list[int]:
    with connect(sim.port) as sock:
        out = []
        for _ in range(n):
            sock.sendall(request_bytes(CHAT, chat_body(2, stream=False)))
            out.append(read_response(sock).status)
        return out


def test_fault_rate_is_seeded(sim_factory: object) -> None:
    args = ("--ttft-ms", "1", "--step-ms", "1", "--fault", "http_500,http_429", "--fault-rate", "0.5")
    first = _statuses(sim_factory(*args, "--seed", "3"), 30)  # type: ignore[operator]
    again = _statuses(sim_factory(*args, "--seed", "3"), 30)  # type: ignore[operator]
    other = _statuses(sim_factory(*args, "--seed", "4"), 30)  # type: ignore[operator]
    assert first == again
    assert first != other
    assert 5 <= sum(s != 200 for s in first) <= 25
    assert set(first) <= {200, 429, 500}
