"""One request, one record, one sink: ``ApiClient.run`` hands its ``Flight`` the record as it
starts and once as it ends, however it ends, and the record the sink sees is final (a failed
check, the phase it was sent in) when it leaves the recorder."""

from __future__ import annotations

from collections.abc import Callable

import gevent
import pytest

from llmload.config.asked import RequestConfig
from llmload.core.phases import Phase, Window
from llmload.core.record import CANCELLED, OK, UNFINISHED, Outcome, RequestRecord
from llmload.core.timeouts import Timeouts
from llmload.run.client import ApiClient
from llmload.transport.base import HttpRequest, ResponseSink
from llmload.workload.prompts import SyntheticPrompts

ANSWER = (
    b'{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}],'
    b'"usage":{"completion_tokens":1,"prompt_tokens":3}}'
)


class Answers:
    """A transport that answers at once with ``ANSWER``, or never (``hang``)."""

    def __init__(self, hang: bool = False) -> None:
        self.hang = hang

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        sink.on_sent(1)
        if self.hang:
            gevent.sleep(60)
        sink.on_headers(2, 200, {"content-type": "application/json"})
        sink.on_data(3, ANSWER)
        sink.on_end(4)

    def close(self) -> None:
        pass


class Judge:
    """An ``AnswerReader`` whose judgement is ``verdict``'s, and that keeps what it read."""

    def __init__(self, verdict: Callable[[RequestRecord], str | None]) -> None:
        self.verdict = verdict
        self.payloads: list[bytes] = []
        self.judged: list[RequestRecord] = []

    def judge(self, record: RequestRecord) -> str | None:
        self.judged.append(record)
        return self.verdict(record)


class Seen:
    """A ``Flight`` that keeps what it was handed, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, RequestRecord, Outcome]] = []

    def began(self, record: RequestRecord) -> None:
        self.events.append(("began", record, record.outcome))

    def ended(self, record: RequestRecord) -> None:
        self.events.append(("ended", record, record.outcome))


def _run(transport: Answers, flight: Seen, **more: object) -> RequestRecord:
    client = ApiClient(RequestConfig(stream=False), "m", Timeouts())
    call = client.call(SyntheticPrompts(8, 4).get(0, 0), "chat")
    window = Window(t0_ns=0)  # measuring since long before: sent in the window
    return client.run(
        transport, call, request_id="r", user="u", stage=0, window=window, flight=flight, **more
    )  # type: ignore[arg-type]


def test_a_request_is_handed_to_its_flight_as_it_starts_and_once_as_it_ends() -> None:
    seen = Seen()
    record = _run(Answers(), seen)
    assert [(what, r is record) for what, r, _ in seen.events] == [("began", True), ("ended", True)]
    assert seen.events[-1][2] == OK and record.phase is Phase.MEASURE


def test_a_failed_check_is_in_the_record_the_flight_sees() -> None:
    seen = Seen()
    judge = Judge(lambda record: "no digits in the answer")
    record = _run(Answers(), seen, reader=judge)
    assert judge.judged == [record] and judge.payloads == [ANSWER]
    assert seen.events[-1][2] == Outcome.CHECK_FAILED == record.outcome
    assert record.error_detail == "no digits in the answer"


def test_a_check_is_not_asked_about_a_failure() -> None:
    seen, judge = Seen(), Judge(lambda record: "never")
    client = ApiClient(RequestConfig(stream=False), "m", Timeouts())

    class Refuses(Answers):
        def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
            sink.on_sent(1)
            sink.on_headers(2, 503, {})
            sink.on_data(3, b"busy")
            sink.on_end(4)

    call = client.call(SyntheticPrompts(8, 4).get(0, 0), "chat")
    record = client.run(Refuses(), call, request_id="r", user="u", stage=0, window=Window(), flight=seen,
                        reader=judge)  # fmt: skip
    assert judge.judged == [] and judge.payloads == [] and record.outcome not in (OK, Outcome.CHECK_FAILED)
    assert seen.events[-1][2] == record.outcome


def test_a_kill_mid_request_ends_the_flight_with_the_record_unfinished() -> None:
    seen = Seen()
    greenlet = gevent.spawn(_run, Answers(hang=True), seen)
    gevent.sleep(0.05)
    greenlet.kill()
    assert [what for what, _, _ in seen.events] == ["began", "ended"]
    assert seen.events[-1][2] == UNFINISHED


def test_a_cancel_ends_the_flight_with_the_record_cancelled() -> None:
    seen = Seen()
    record = _run(Answers(hang=True), seen, cancel_after_s=0.01)
    assert seen.events[-1][2] == CANCELLED == record.outcome
    assert [what for what, _, _ in seen.events] == ["began", "ended"]


@pytest.mark.parametrize("hang", [False, True])
def test_without_a_flight_the_record_is_still_returned_final(hang: bool) -> None:
    client = ApiClient(RequestConfig(stream=False), "m", Timeouts())
    call = client.call(SyntheticPrompts(8, 4).get(0, 0), "chat")
    record = client.run(Answers(hang=hang), call, request_id="r", user="u", stage=0, window=Window(),
                        cancel_after_s=0.01 if hang else None)  # fmt: skip
    assert record.outcome == (CANCELLED if hang else OK) and record.phase is Phase.WARMUP
