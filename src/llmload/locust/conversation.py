"""A Locust user that holds multi-turn conversations whose history grows (``--turns``).

Each task is one turn: the conversation's history plus a fresh user message from the session's
prompt source (``workload/conversations.py`` builds the messages). Between turns the user
thinks for ``--think-time-s`` (seeded, ±50%); after the last turn, or a failed one, it starts a
new conversation at once. With ``--api`` the turns speak that API; with ``--conversation-state
server`` (Responses only) each later turn sends its new message and the previous answer's id,
and the server reads the history it stored. A failed turn ends its conversation because the
reply it would build on never came; retrying it would make a conversation's later turns depend
on the server's failures.

It mirrors ``ChatUser`` rather than subclassing it: Locust collects ``@task`` methods from base
classes too, so a subclass would run ``ChatUser.generate`` beside its own task. It reports
through the same ``report_to_locust``: one Locust request event per real request.
"""

from __future__ import annotations

from typing import ClassVar

from locust import task
from locust.env import Environment

from llmload.locust.user import LLMUser
from llmload.workload.conversations import Conversation


class ConversationUser(LLMUser):
    """Sends the turns of one conversation after another; one Locust request event each.

    Its request count runs over all its conversations, so prompt salts stay unique."""

    scenario: ClassVar[str] = "conversation"

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._conversation = Conversation()
        self._pause_s = 0.0
        self._conversations = 1
        self._header_names = self._session.config.request.session_headers

    def wait_time(self) -> float:
        # Locust sleeps this long between tasks, and stops a user cleanly while it sleeps.
        return self._pause_s

    @task
    def turn(self) -> None:
        session = self._session
        workload = session.config.workload
        spec = workload.conversation
        count = self.client.count
        api = session.config.request.api_for(self.endpoint)
        prompt = self._conversation.ask(self.prompt())
        # the conversation's key, for a router that keeps a session on one replica
        key = f"{self._session.run_id}.{self._user_id}.{self._conversations}"
        headers = {name: key for name in self._header_names}
        response_id = None
        if spec.state == "server":  # only the new message, after the server's stored answer
            record, response_id = self.client.turn(prompt, api, self._conversation.response_id, headers)
        else:
            record = self.client.send(prompt, api, headers=headers)
        if record.ok and self._conversation.turns_done + 1 < spec.turns:
            self._conversation = self._conversation.answered(prompt, record.output_tokens, response_id)
            self._pause_s = spec.think_s(workload.seed, self._user_id, count)
        else:
            self._conversation = Conversation()
            self._conversations += 1
            self._pause_s = 0.0
