"""Locust users that model chat clients: closed loop, one request in flight per user."""

from __future__ import annotations

from typing import Any, ClassVar

from locust import User, constant, task

from llmload.config import Endpoint
from llmload.locust.plugin import session_of
from llmload.run.request import send_request
from llmload.transport.base import Transport


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
        send_request(
            self.environment,
            self._session,
            self.endpoint,
            self._transport,
            prompt,
            user_id=self._user_id,
            index=self._count,
        )
        self._count += 1


class CompletionsUser(ChatUser):
    """The same, against the legacy ``/v1/completions`` endpoint."""

    endpoint: ClassVar[Endpoint] = "completions"
    scenario: ClassVar[str] = "completions"
