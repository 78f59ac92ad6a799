"""Locust users that model chat clients: closed loop, one request in flight per user.

``LLMUser`` is the base of every one of them, and of a scenario's own: its ``self.client``
speaks the OpenAI API (``run/llm_client.py``) and measures each call. The built-in users are
``LLMUser``s with one task that sends the workload's next prompt.
"""

from __future__ import annotations

from typing import ClassVar

from locust import User, constant, task
from locust.env import Environment

from llmload.config.asked import Endpoint
from llmload.locust.plugin import session_of
from llmload.run.llm_client import LLMClient
from llmload.transport.base import Transport
from llmload.workload.prompts import Prompt


class SessionUser(User):
    """What every llmload user has: the process's session, an id unique over the fleet (prompt
    salts and request ids) and a client whose requests are measured."""

    abstract = True
    endpoint: ClassVar[Endpoint] = "chat"
    wait_time = constant(0)

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._session = session_of(environment)
        self._user_id = self._session.new_user_id()
        self.client = LLMClient(
            environment.events.request.fire, self._session, self._user_id, self._connection
        )
        self._texts = 0  # text() calls so far: each gets a salt of its own

    def _connection(self) -> Transport:
        raise NotImplementedError("this user passes a connection to every request")

    def prompt(self) -> Prompt:
        """The workload's next prompt for this user (``--prompt-tokens``, ``--dataset``, ...),
        salted by the user's request count so that no two requests share it."""
        return self._session.prompts.get(self._user_id, self.client.count)

    def text(self, tokens: int) -> str:
        """Synthetic text of ``tokens`` words, a new salt on every call as the workload's
        prompts have on every request (the simulator counts a word as a token; a real
        tokenizer about 1 to 1.4)."""
        self._texts += 1
        return self._session.texts.get(tokens, self._user_id, self._texts)


class LLMUser(SessionUser):
    """A user with one keep-alive connection of its own, one request in flight at a time,
    and ``self.client`` to send them: subclass it and write tasks, as with Locust's
    ``HttpUser``. See docs/scenarios.md."""

    abstract = True

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._transport: Transport | None = None

    def _connection(self) -> Transport:
        if self._transport is None:
            self._transport = self._session.transports.new()
        return self._transport

    def on_start(self) -> None:
        self._connection()

    def on_stop(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None


class ChatUser(LLMUser):
    """Sends chat completions back to back; each request is one Locust request event."""

    scenario: ClassVar[str] = "chat"

    @task
    def generate(self) -> None:
        api = self._session.config.request.api_for(self.endpoint)
        tenants = self._session.tenants
        if tenants is None:
            self.client.send(self.prompt(), api)
        else:
            tenant, prompt = tenants.next(self._user_id, self.client.count)
            self.client.send(prompt, api, tenant=tenant)


class CompletionsUser(ChatUser):
    """The same, against the legacy ``/v1/completions`` endpoint."""

    endpoint: ClassVar[Endpoint] = "completions"
    scenario: ClassVar[str] = "completions"


class EmbeddingsUser(LLMUser):
    """Sends ``/v1/embeddings`` requests back to back: ``--embedding-batch`` inputs of
    ``--prompt-tokens`` words each. Their latency is end to end; input tok/s is the summary's
    ``input_tok_per_s`` (from each answer's ``usage.prompt_tokens``)."""

    endpoint: ClassVar[Endpoint] = "embeddings"
    scenario: ClassVar[str] = "embeddings"

    @task
    def embed(self) -> None:
        batch = self._session.config.workload.embedding_batch
        first = self.client.count * batch  # every input of every request salted apart
        prompts = self._session.prompts
        self.client.embeddings([prompts.get(self._user_id, first + i).text for i in range(batch)])


class RerankUser(LLMUser):
    """Sends ``/v1/rerank`` requests back to back: one query of --prompt-tokens words and
    ``--rerank-documents`` documents of as many. The server reads every (query, document) pair
    in one forward pass: latency is end to end, and input tok/s counts its ``usage``."""

    endpoint: ClassVar[Endpoint] = "rerank"
    scenario: ClassVar[str] = "rerank"

    @task
    def rerank(self) -> None:
        n = self._session.config.workload.rerank_documents
        first = self.client.count * (n + 1)  # the query and every document salted apart
        prompts = self._session.prompts
        texts = [prompts.get(self._user_id, first + i).text for i in range(n + 1)]
        self.client.rerank(texts[0], texts[1:])
