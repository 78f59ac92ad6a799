"""``send_request``: what every user does per request, from the session's count to Locust's event.

Separate from the user classes so that it imports no locust (importing locust monkey-patches the
process): the request path is then testable in a plain process, and all it takes of Locust is
the one call it makes per request (``RequestEvent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import gevent

from llmload.core.phases import Window
from llmload.core.record import NOT_FAILED, UNFINISHED, RequestRecord
from llmload.core.recorder import AnswerReader
from llmload.run.client import Call
from llmload.run.process_run import ProcessRun
from llmload.transport.base import Transport


class RequestEvent(Protocol):
    """Locust's ``environment.events.request.fire``: its request statistics and web UI count
    what this is told."""

    def __call__(
        self,
        *,
        request_type: str,
        name: str,
        response_time: float,
        response_length: int,
        exception: BaseException | None,
        context: dict[str, object],
    ) -> None: ...


def send_request(
    report: RequestEvent,
    session: ProcessRun,
    transport: Transport,
    call: Call,
    *,
    user_id: int,
    index: int,
    stage_window: tuple[int, Window] | None = None,
    scheduled_ns: int | None = None,
    reader: AnswerReader | None = None,
) -> RequestRecord:
    """One request of a user, whatever its kind: tag it with the stage it is sent in, run it;
    its record, final, is folded and reported to Locust as it ends (also when the run ends
    mid-request).

    ``reader`` receives the response's payloads and judges a successful answer before the
    record is final, so a scenario's check of the answer can turn it into a failure."""
    if scheduled_ns is None:
        # Closed loop: the reads that have arrived go first. A request's end and the next one's
        # start (record, Locust event, prompt, body, send) take a few hundred µs on a worker
        # whose CPU idled between events, and a read that waits behind them is stamped late
        # by as much: ITL error (bench/accuracy.py). ``gevent.idle`` returns once the loop has
        # nothing ready; ``sleep(0)`` resumes before the loop polls for reads again. An
        # open-loop request is due at its time: waiting would count as queueing latency.
        gevent.idle()
    stage, window = stage_window or session.current()
    client = session.client()
    flight = _Flight(
        session,
        session.request_started(stage, window),
        report,
        call.name or client.request_path(call.endpoint),
    )
    workload = session.config.workload
    record = client.run(
        transport,
        call,
        request_id=f"{session.process_tag}-{user_id}-{index}",
        user=str(user_id),
        stage=stage,
        window=window,
        flight=flight,
        scheduled_ns=scheduled_ns,
        reader=reader,
        cancel_after_s=workload.cancel.delay_s(workload.seed, user_id, index),
    )
    if scheduled_ns is None and record.outcome not in NOT_FAILED:
        gevent.sleep(session.backoff_s())  # a failing server is not hammered by a tight loop
    return record


@dataclass(slots=True)
class _Flight:
    """One request's bookkeeping, as the client hands it the record: in flight while it runs
    (live progress counts its tokens), then counted, folded and reported to Locust."""

    session: ProcessRun
    counted: bool  # sent inside the measured window: in flight there until it ends
    report: RequestEvent
    name: str

    def began(self, record: RequestRecord) -> None:
        self.session.active.add(record)

    def ended(self, record: RequestRecord) -> None:
        self.session.active.discard(record)
        self.session.on_record(record, self.counted)
        if record.outcome != UNFINISHED:  # the run ended it, not the server: no Locust request
            report_to_locust(self.report, self.name, record)


def report_to_locust(report: RequestEvent, name: str, r: RequestRecord) -> None:
    """Exactly one Locust request event per real request; "response_length" carries the output
    tokens, the only size that matters here. Metrics never travel as fake requests."""
    e2e_ms = ((r.done_ns or 0) - (r.sent_ns or r.scheduled_ns)) / 1e6
    # A cancel is the workload's, not the server's failure: Locust counts it as a request.
    error = None if r.outcome in NOT_FAILED else RuntimeError(f"{r.outcome}: {r.error_detail or ''}")
    report(
        request_type="POST",
        name=name,
        response_time=e2e_ms,
        response_length=r.output_tokens,
        exception=error,
        context={},
    )
