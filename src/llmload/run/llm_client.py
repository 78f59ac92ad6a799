"""``LLMClient``: what a scenario's ``self.client`` is, and the one path every user's requests take.

A scenario calls ``chat``, ``completions`` or ``embeddings`` with the OpenAI request's own
fields and gets a ``Reply``: the answer (text, reasoning, tool calls, usage), the assistant
message to append, and the request's own timings. Each call is one measured request exactly as
the built-in users' are (``send_request``: stage tagging, warm-up and drain, the record, the
histograms, requests.jsonl, one Locust event), and the built-in users send through ``send``
here. Only a call that returns a ``Reply`` keeps the response's payloads to read the answer;
the built-in users read nothing, and pay nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from llmload.config.asked import Endpoint
from llmload.config.tenants import Tenant
from llmload.core.api_answer import response_id_of
from llmload.core.phases import Window
from llmload.core.record import RequestRecord
from llmload.run.client import ApiClient, Call
from llmload.run.process_run import ProcessRun
from llmload.run.reply import Check, Reading, Reply
from llmload.run.request import RequestEvent, send_request
from llmload.transport.base import Transport
from llmload.workload.prompts import Prompt


class LLMClient:
    """One user's client: its requests share the user's connection and its request count."""

    def __init__(
        self,
        report: RequestEvent,
        session: ProcessRun,
        user_id: int,
        transport: Callable[[], Transport],
    ) -> None:
        self._report = report
        self._session = session
        self._user_id = user_id
        self._transport = transport
        self.count = 0  # requests sent so far: the index in their ids and prompt salts

    # -- a scenario's calls ----------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        max_tokens: int | None = None,
        stream: bool | None = None,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/chat/completions``. ``fields`` are the request's other OpenAI fields
        (``tools``, ``tool_choice``, ``response_format``, ``temperature``,
        ``max_completion_tokens``, an engine's extensions ...), sent as given. ``stream``
        defaults to the run's ``--no-stream`` setting; ``name`` labels the request in the
        summary and in Locust (``name=`` in Locust's own clients)."""
        call = self._client().chat(
            messages,
            max_tokens=max_tokens,
            stream=stream,
            fields=fields,
            name=name,
            headers=_pairs(headers),
        )
        return self._reply(call, check, tuple(messages))

    def responses(
        self,
        input: str | Sequence[Mapping[str, object]],
        *,
        max_output_tokens: int | None = None,
        previous_response_id: str | None = None,
        stream: bool | None = None,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/responses``, OpenAI's Responses API: ``input`` is text or input items;
        ``previous_response_id`` (a ``Reply.response_id``) continues a conversation the server
        keeps, so only the new turn is sent. ``fields``: ``instructions``, ``tools``,
        ``reasoning``, ... as given."""
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        if previous_response_id is not None:
            fields = {**fields, "previous_response_id": previous_response_id}
        call = self._client().conversation(
            "responses", items, max_tokens=max_output_tokens, stream=stream, fields=fields, name=name,
            headers=_pairs(headers),
        )  # fmt: skip
        return self._reply(call, check, tuple(items))

    def messages(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        max_tokens: int | None = None,
        stream: bool | None = None,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/messages``, Anthropic's Messages API: a system message goes to ``system``;
        ``fields``: ``tools``, ``thinking``, ``temperature``, ... as given."""
        call = self._client().conversation(
            "messages", messages, max_tokens=max_tokens, stream=stream, fields=fields, name=name,
            headers=_pairs(headers),
        )  # fmt: skip
        return self._reply(call, check, tuple(messages))

    def completions(
        self,
        prompt: str,
        *,
        max_tokens: int | None = None,
        stream: bool | None = None,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/completions``, as ``chat``."""
        call = self._client().completions(
            prompt,
            max_tokens=max_tokens,
            stream=stream,
            fields=fields,
            name=name,
            headers=_pairs(headers),
        )
        return self._reply(call, check, ())

    def embeddings(
        self,
        input: str | Sequence[str],
        *,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/embeddings``: one input or a batch; its latency is end to end, and the
        summary counts its ``usage.prompt_tokens`` as input tokens."""
        call = self._client().embeddings(input, fields=fields, name=name, headers=_pairs(headers))
        return self._reply(call, check, ())

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        name: str | None = None,
        check: Check | None = None,
        headers: Mapping[str, str] | None = None,
        **fields: object,
    ) -> Reply:
        """``POST /v1/rerank``: order ``documents`` by relevance to ``query`` (``Reply.ranking``,
        best first; ``top_n`` keeps the best few). Latency is end to end, as for embeddings,
        and the summary counts the server's tokens as input tokens."""
        call = self._client().rerank(
            query, documents, top_n=top_n, fields=fields, name=name, headers=_pairs(headers)
        )
        return self._reply(call, check, ())

    # -- the built-in users' path ------------------------------------------------------------------

    def send(
        self,
        prompt: Prompt,
        endpoint: Endpoint,
        *,
        transport: Transport | None = None,
        stage_window: tuple[int, Window] | None = None,
        scheduled_ns: int | None = None,
        headers: Mapping[str, str] | None = None,
        tenant: Tenant | None = None,
    ) -> RequestRecord:
        """A workload prompt as the run's options shape it; nothing of the answer is kept.
        The open-loop user passes its own connection, stage and due time; a conversation its
        session's headers; a user of a tenant mix the request's tenant (its model, headers and
        name)."""
        if tenant is None:
            call = self._client().call(prompt, endpoint)
        else:
            fields = None if tenant.model is None else {"model": tenant.model}
            call = replace(self._client().call(prompt, endpoint, fields), name=tenant.request_name)
            headers = {**dict(tenant.headers), **(headers or {})}
        if headers:
            call = replace(call, headers=_pairs(headers))
        return self._send(call, transport=transport, stage_window=stage_window, scheduled_ns=scheduled_ns)

    def ask(
        self,
        prompt: Prompt,
        endpoint: Endpoint,
        *,
        headers: Mapping[str, str] | None = None,
        fields: Mapping[str, object] | None = None,
    ) -> Reply:
        """A workload prompt as ``send`` sends it (its labels included), with the answer kept
        and read: an agent's turn, whose next prompt carries the reply. ``fields`` go into the
        body beside the run's (a recorded turn's ``tools``)."""
        call = self._client().call(prompt, endpoint, fields)
        if headers:
            call = replace(call, headers=_pairs(headers))
        return self._reply(call, None, prompt.messages)

    def turn(
        self,
        prompt: Prompt,
        endpoint: Endpoint,
        previous_response_id: str | None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[RequestRecord, str | None]:
        """A conversation's turn whose history the server keeps: sent after the answer of
        ``previous_response_id`` (None: the first turn), and the new answer's id."""
        fields = None if previous_response_id is None else {"previous_response_id": previous_response_id}
        call = self._client().call(prompt, endpoint, fields)
        if headers:
            call = replace(call, headers=_pairs(headers))
        reading = Reading(sent=())
        record = self._send(call, reader=reading)
        payloads = reading.payloads
        return record, response_id_of(payloads[0]) if record.ok and payloads else None

    def _send(
        self,
        call: Call,
        *,
        transport: Transport | None = None,
        stage_window: tuple[int, Window] | None = None,
        scheduled_ns: int | None = None,
        reader: Reading | None = None,
    ) -> RequestRecord:
        index, self.count = self.count, self.count + 1
        return send_request(
            self._report,
            self._session,
            transport or self._transport(),
            call,
            user_id=self._user_id,
            index=index,
            stage_window=stage_window,
            scheduled_ns=scheduled_ns,
            reader=reader,
        )

    def _reply(self, call: Call, check: Check | None, sent: tuple[Mapping[str, object], ...]) -> Reply:
        reading = Reading(sent, check)
        return reading.reply(self._send(call, reader=reading))

    def _client(self) -> ApiClient:
        return self._session.client()


def _pairs(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple((headers or {}).items())
