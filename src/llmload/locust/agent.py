"""A Locust user that runs agentic sessions one after another (the ``agent`` scenario).

Each task is one whole session (``run/agent.py``): its turns, tool waits and sub-agents. The
user's own requests go over its keep-alive connection; sub-agents open their own. Locust's
user count is the number of concurrent sessions; a fan-out of K puts up to K more requests in
flight for as long as it lasts. A session's key is unique over the fleet and the run: the run
id, the user's id and the user's session count.

It mirrors ``ChatUser`` rather than subclassing it, for the reason ``ConversationUser`` gives.
"""

from __future__ import annotations

from typing import ClassVar

from locust import task
from locust.env import Environment

from llmload.locust.user import LLMUser
from llmload.run.agent import Agent, Seat


class AgentUser(LLMUser):
    """Runs one agentic session after another; one Locust request event per request."""

    scenario: ClassVar[str] = "agent"

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        session = self._session
        self._agent = Agent(
            session, environment.events.request.fire, session.config.request.api_for(self.endpoint)
        )
        self._sessions = 0

    @task
    def session(self) -> None:
        key = f"{self._session.run_id}.{self._user_id}.{self._sessions + 1}"
        self._agent.run(Seat(self.client, self._user_id, key, self.text, self._sessions))
        self._sessions += 1
