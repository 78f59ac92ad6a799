"""At a request's end and the next one's start, a closed-loop user lets other streams' reads
that have arrived go first.

That work (record, Locust event, prompt, body, send) is a few hundred µs on a worker whose CPU
idled between events, and a read waiting behind it is stamped late by as much: ITL error. Here
another stream's read is a real socket that turns readable while the request ends or before it
starts; the order of what ran is the assertion.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import gevent
import orjson
import pytest
from gevent import socket

from llmload.run.process_run import ProcessRun
from llmload.run.request import send_request
from llmload.transport.base import HttpRequest, ResponseSink
from llmload.workload.prompts import SyntheticPrompts
from tests.support.session import measuring

# Orderings of one loop's events, no bound on a time: with the tests that wait.
pytestmark = pytest.mark.integration

CHUNK = orjson.dumps(
    {
        "id": "r",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
    }
)
BODY = b"data: " + CHUNK + b"\n\ndata: [DONE]\n\n"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[ProcessRun]:
    s = measuring(tmp_path, 1)
    yield s
    s.close()


class OtherStream:
    """Another stream's connection: a greenlet blocked reading it, logging when it reads."""

    def __init__(self, log: list[str]) -> None:
        self._ours, theirs = socket.socketpair()
        self._theirs = theirs
        self._reader = gevent.spawn(self._read, log)
        gevent.sleep(0.01)  # now blocked in recv

    def _read(self, log: list[str]) -> None:
        self._theirs.recv(16)
        log.append("other stream's read")

    def arrive(self) -> None:
        """The server writes to it: readable, but the loop has not polled since."""
        self._ours.send(b"x")

    def close(self) -> None:
        self._reader.join(timeout=1)
        self._ours.close()
        self._theirs.close()


class OneShotTransport:
    """Answers every request with a one-token stream; ``during`` runs as the stream ends."""

    def __init__(self, log: list[str], during: OtherStream | None = None) -> None:
        self._log = log
        self._during = during

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        self._log.append("request sent")
        now = time.perf_counter_ns
        sink.on_sent(now())
        sink.on_headers(now(), 200, {"content-type": "text/event-stream"})
        if self._during is not None:
            self._during.arrive()
        sink.on_data(now(), BODY)
        sink.on_end(now())

    def close(self) -> None:
        pass


class LocustEvents:
    """What ``send_request`` uses of a Locust environment: ``events.request.fire``."""

    def __init__(self, log: list[str]) -> None:
        self.events = self
        self.request = self
        self._log = log

    def fire(self, **kwargs: object) -> None:
        self._log.append("Locust event")


def one_request(
    session: ProcessRun, transport: OneShotTransport, log: list[str], *, scheduled_ns: int | None = None
) -> None:
    environment = LocustEvents(log)
    on_record = session.on_record

    def logged(*args: object, **kwargs: object) -> None:
        log.append("record counted")
        on_record(*args, **kwargs)  # type: ignore[arg-type]

    session.on_record = logged  # type: ignore[method-assign]
    prompt = SyntheticPrompts(16, 4).get(0, 0)
    call = session.client().call(prompt, "chat")
    record = send_request(
        environment.fire, session, transport, call, user_id=0, index=0, scheduled_ns=scheduled_ns
    )
    assert record.ok and record.output_tokens == 1, record


def test_a_read_that_arrives_as_a_request_ends_goes_before_its_bookkeeping(session: ProcessRun) -> None:
    log: list[str] = []
    other = OtherStream(log)
    one_request(session, OneShotTransport(log, during=other), log)
    other.close()
    assert log == ["request sent", "other stream's read", "record counted", "Locust event"]


@pytest.mark.parametrize(
    ("open_loop", "order"),
    [
        # closed loop: what has arrived goes before the next request is sent
        (False, ["other stream's read", "request sent", "record counted", "Locust event"]),
        # open loop: sent when due (a wait would count as client queueing), then the read
        (True, ["request sent", "other stream's read", "record counted", "Locust event"]),
    ],
)
def test_a_read_that_has_arrived_before_a_request_starts(
    session: ProcessRun, open_loop: bool, order: list[str]
) -> None:
    log: list[str] = []
    other = OtherStream(log)
    other.arrive()
    one_request(
        session, OneShotTransport(log), log, scheduled_ns=time.perf_counter_ns() if open_loop else None
    )
    other.close()
    assert log == order


class KilledAfterResponse(OneShotTransport):
    """The run ends the user just after its response: the kill lands on its next switch."""

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        super().exchange(request, sink)
        gevent.spawn(gevent.getcurrent().kill, block=False)


def test_a_user_ended_while_it_waits_after_a_response_still_records_it(session: ProcessRun) -> None:
    log: list[str] = []
    user = gevent.spawn(one_request, session, KilledAfterResponse(log), log)
    user.join(timeout=5)
    assert user.dead and isinstance(user.value, gevent.GreenletExit)
    assert log == ["request sent", "record counted", "Locust event"]
    assert session.in_flight == 0 and session.completed() == {0: 1}
