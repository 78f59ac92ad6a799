"""Locust users that model chat clients: closed loop, one request in flight per user."""

from __future__ import annotations

from typing import Any, ClassVar

import gevent
from locust import User, constant, task

from llmload.config import Endpoint
from llmload.locust.plugin import session_of
from llmload.locust.session import Session
from llmload.metrics.aggregate import Window
from llmload.record import OK, RequestRecord
from llmload.transport.base import Transport
from llmload.workload.prompts import Prompt


class SessionUser(User):
    """What every llmload user has: the process's session, an id unique over the fleet (prompt
    salts and request ids), and a count of the requests it sent."""

    abstract = True
    endpoint: ClassVar[Endpoint] = "chat"
    wait_time = constant(0)

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._session = session_of(environment)
        self._user_id = self._session.new_user_id()
        self._count = 0


class ConnectionUser(SessionUser):
    """A user with one keep-alive connection of its own: one stream in flight at a time."""

    abstract = True

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._transport: Transport | None = None

    def on_start(self) -> None:
        self._transport = self._session.transports.new()

    def on_stop(self) -> None:
        if self._transport is not None:
            self._transport.close()


class ChatUser(ConnectionUser):
    """Sends chat completions back to back; each request is one Locust request event."""

    scenario: ClassVar[str] = "chat"

    @task
    def generate(self) -> None:
        assert self._transport is not None
        prompt = self._session.prompts.get(self._user_id, self._count)
        send_request(self.environment, self._session, self.endpoint, self._transport, prompt,
                     user_id=self._user_id, index=self._count)
        self._count += 1


def send_request(environment: Any, session: Session, endpoint: Endpoint, transport: Transport,
                 prompt: Prompt, *, user_id: int, index: int,
                 stage_window: tuple[int, Window] | None = None,
                 scheduled_ns: int | None = None) -> RequestRecord:
    """One request of a user, whatever its kind: tag it with the stage it is sent in, run it,
    write and fold its record (also when the run ends mid-request), report it to Locust."""
    stage, window = stage_window or session.current()
    counted = session.request_started(stage, window)

    def unfinished(record: RequestRecord) -> None:
        session.on_record(record, counted)

    client = session.client(endpoint)
    record = client.run(transport, prompt, request_id=f"{session.process_tag}-{user_id}-{index}",
                        user=str(user_id), stage=stage, window=window, scheduled_ns=scheduled_ns,
                        on_unfinished=unfinished, active=session.active)
    # Other streams' reads that are ready go first: what follows (bookkeeping, the Locust
    # event, the next request's body and send) is a few hundred µs on a worker whose CPU idled
    # between events, and a read waiting behind it is stamped late by as much.
    gevent.sleep(0)
    session.on_record(record, counted)
    report_to_locust(environment, client.path, record)
    return record


def report_to_locust(environment: Any, name: str, r: RequestRecord) -> None:
    """Exactly one Locust request event per real request; "response_length" carries the output
    tokens, the only size that matters here. Metrics never travel as fake requests."""
    e2e_ms = ((r.done_ns or 0) - (r.sent_ns or r.scheduled_ns)) / 1e6
    error = None if r.outcome == OK else RuntimeError(f"{r.outcome}: {r.error_detail or ''}")
    environment.events.request.fire(request_type="POST", name=name, response_time=e2e_ms,
                                    response_length=r.output_tokens, exception=error, context={})


class CompletionsUser(ChatUser):
    """The same, against the legacy ``/v1/completions`` endpoint."""

    endpoint: ClassVar[Endpoint] = "completions"
    scenario: ClassVar[str] = "completions"
