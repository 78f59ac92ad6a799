"""Locust users that model chat clients: closed loop, one request in flight per user."""

from __future__ import annotations

from typing import Any, ClassVar

from locust import User, constant, task

from llmload.config import Endpoint
from llmload.locust.plugin import session_of
from llmload.record import OK, RequestRecord
from llmload.transport.base import Transport


class ChatUser(User):
    """Sends chat completions back to back; each request is one Locust request event."""

    endpoint: ClassVar[Endpoint] = "chat"
    scenario: ClassVar[str] = "chat"
    wait_time = constant(0)

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._session = session_of(environment)
        self._user_id = self._session.new_user_id()
        self._count = 0
        self._transport: Transport | None = None

    def on_start(self) -> None:
        self._transport = self._session.transports.new()

    def on_stop(self) -> None:
        if self._transport is not None:
            self._transport.close()

    @task
    def generate(self) -> None:
        session = self._session
        assert self._transport is not None
        prompt = session.prompts.get(self._user_id, self._count)
        stage, window = session.current()
        counted = session.request_started(stage, window)

        def unfinished(record: RequestRecord) -> None:
            session.on_record(record, counted)

        record = session.client(self.endpoint).run(
            self._transport,
            prompt,
            request_id=f"{session.process_tag}-{self._user_id}-{self._count}",
            user=str(self._user_id),
            stage=stage,
            window=window,
            on_unfinished=unfinished,
            active=session.active,
        )
        self._count += 1
        session.on_record(record, counted)
        self._report(record)

    def _report(self, r: RequestRecord) -> None:
        report_to_locust(self.environment, self._session.client(self.endpoint).path, r)



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
