"""One request, end to end: a ``Call`` → transport → recorder → record.

The edge between the sans-I/O core and a transport. It knows gevent only to recognise that its
greenlet is being killed at the end of a run, so the in-flight stream is recorded as unfinished
(with its tokens) instead of vanishing: dropping it would bias results against long requests.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypedDict

import gevent
from greenlet import GreenletExit

from llmload.config.asked import PATHS, Endpoint, RequestConfig
from llmload.core.phases import Window
from llmload.core.record import RequestRecord
from llmload.core.recorder import AnswerReader, ResponseRecorder
from llmload.core.timeouts import Timeouts
from llmload.core.tracecontext import HEADER, trace_ids
from llmload.protocol.payloads import (
    chat_body,
    completions_body,
    embeddings_body,
    messages_body,
    rerank_body,
    responses_body,
)
from llmload.transport.base import HttpRequest, Transport, TransportFailure
from llmload.workload.prompts import Prompt

# The endpoints whose answers vLLM's per-request metrics ride on (--enable-per-request-metrics):
# chat and completions, as its docs say; the simulator also writes them on Responses answers.
_TIMED: frozenset[Endpoint] = frozenset({"chat", "completions", "responses"})


class Flight(Protocol):
    """Where one request's record goes: seen as it starts, and once as it ends, however it
    ends (the process's run state counts it in flight, then folds it)."""

    def began(self, record: RequestRecord) -> None: ...

    def ended(self, record: RequestRecord) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    """One request to send: where, the body, and what its record says about what was asked."""

    endpoint: Endpoint
    body: bytes
    stream: bool
    max_tokens: int | None = None
    prompt_tokens_requested: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    name: str | None = None  # the scenario's label; None: the built-in users' unnamed requests
    headers: tuple[tuple[str, str], ...] = ()  # added to the run's own for this request
    images: int = 0  # image_url parts the body carries, and their files' bytes
    image_bytes: int = 0


class _Shape(TypedDict):
    """What the run's options and a call's own fields make of every body."""

    max_tokens: int | None
    ignore_eos: bool
    extra: Mapping[str, object]


class ApiClient:
    """Builds and runs the requests of every API (chat, completions, embeddings, rerank, the
    Responses and Messages APIs) for one process; shared by all its users (it holds no state
    that changes per request)."""

    def __init__(
        self,
        request: RequestConfig,
        model: str,
        timeouts: Timeouts,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        run_id: str = "",
        server_timings: bool = False,
    ) -> None:
        self.request = request
        # vLLM's include_metrics (the request half of its per-request metrics, whose server
        # half is --enable-per-request-metrics), under the user's own extra fields.
        self._extra: Mapping[str, object] = (
            {"include_metrics": True, **request.extra_body} if server_timings else request.extra_body
        )
        self._asks = server_timings
        self.model = model
        self._run_id = run_id  # with the request's id, the ids of its trace (tracecontext.py)
        # A traceparent of the user's own (--header) is theirs to send: none of ours beside it.
        self._trace = not any(name.lower() == HEADER for name, _ in request.extra_headers)
        self._timeouts = timeouts
        self._clock = clock
        common = [("Content-Type", "application/json")]
        if request.api_key:
            common.append(("Authorization", f"Bearer {request.api_key}"))
        common.extend(request.extra_headers)
        self._headers = {
            True: (*common, ("Accept", "text/event-stream")),
            False: (*common, ("Accept", "application/json")),
        }
        # Anthropic's clients name the API's version, and their key in its own header.
        anthropic = [("anthropic-version", ANTHROPIC_VERSION)]
        if request.api_key:
            anthropic.append(("x-api-key", request.api_key))
        self._api_headers: dict[Endpoint, tuple[tuple[str, str], ...]] = {"messages": tuple(anthropic)}

    def call(self, prompt: Prompt, endpoint: Endpoint, fields: Mapping[str, object] | None = None) -> Call:
        """The built-in users' request for a prompt, as the run's options shape it; ``fields``
        go into its body beside them (a conversation's ``previous_response_id``)."""
        r, shape = self.request, self._shape(prompt.max_tokens, fields, endpoint)
        if endpoint == "completions":
            body = completions_body(self.model, prompt.text, stream=r.stream, **shape)
        else:
            body = _CONVERSATION_BODY[endpoint](self.model, prompt.messages, stream=r.stream, **shape)
        return Call(
            endpoint,
            _exact(body),
            r.stream,
            prompt.max_tokens,
            prompt.prompt_tokens_requested,
            prompt.labels,
            images=prompt.images,
            image_bytes=prompt.image_bytes,
        )

    def chat(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        max_tokens: int | None,
        stream: bool | None = None,
        fields: Mapping[str, object] | None = None,
        name: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        """A chat completion: the run's ``--extra-body`` and ``--ignore-eos`` apply, and the
        call's own ``fields`` (tools, temperature, response_format, ...) win over both."""
        return self.conversation(
            "chat", messages, max_tokens=max_tokens, stream=stream, fields=fields, name=name, headers=headers
        )

    def conversation(
        self,
        endpoint: Endpoint,
        messages: Sequence[Mapping[str, object]],
        *,
        max_tokens: int | None,
        stream: bool | None = None,
        fields: Mapping[str, object] | None = None,
        name: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        """A conversation in the API ``endpoint`` speaks (chat, responses or messages), as ``chat``."""
        stream = self.request.stream if stream is None else stream
        body = _CONVERSATION_BODY[endpoint](
            self.model, messages, stream=stream, **self._shape(max_tokens, fields, endpoint)
        )
        return Call(endpoint, _exact(body), stream, _limit(max_tokens, fields), name=name, headers=headers)

    def completions(
        self,
        prompt: str,
        *,
        max_tokens: int | None,
        stream: bool | None = None,
        fields: Mapping[str, object] | None = None,
        name: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        stream = self.request.stream if stream is None else stream
        shape = self._shape(max_tokens, fields, "completions")
        body = completions_body(self.model, prompt, stream=stream, **shape)
        return Call(
            "completions", _exact(body), stream, _limit(max_tokens, fields), name=name, headers=headers
        )

    def embeddings(
        self,
        inputs: str | Sequence[str],
        *,
        fields: Mapping[str, object] | None = None,
        name: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        body = embeddings_body(self.model, inputs, extra={**self.request.extra_body, **(fields or {})})
        return Call("embeddings", _exact(body), False, name=name, headers=headers)

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        fields: Mapping[str, object] | None = None,
        name: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        extra = {**self.request.extra_body, **(fields or {})}
        body = rerank_body(self.model, query, documents, top_n=top_n, extra=extra)
        return Call("rerank", _exact(body), False, name=name, headers=headers)

    def _shape(
        self, max_tokens: int | None, fields: Mapping[str, object] | None, endpoint: Endpoint
    ) -> _Shape:
        # include_metrics goes only where vLLM reads it: a Messages body is Anthropic's to check
        base = self._extra if endpoint in _TIMED else self.request.extra_body
        extra = {**base, **fields} if fields else base
        return _Shape(max_tokens=max_tokens, ignore_eos=self.request.ignore_eos, extra=extra)

    def run(
        self,
        transport: Transport,
        call: Call,
        *,
        request_id: str,
        user: str,
        stage: int,
        window: Window,
        flight: Flight | None = None,
        scheduled_ns: int | None = None,
        reader: AnswerReader | None = None,
        cancel_after_s: float | None = None,
    ) -> RequestRecord:
        """Send one request and return its record, final; failures are data on the record.

        ``flight`` sees the record when it starts (live progress counts its tokens) and once
        when it ends, however it ends: also when the greenlet is killed mid-request (the
        record then unfinished) before the kill goes on. ``reader`` receives the response's
        payloads and judges a successful answer (``AnswerReader``).
        ``cancel_after_s``: close the request that long after it starts (``--cancel``).
        """
        now = self._clock()
        record = RequestRecord(
            request_id=request_id,
            user=user,
            stage=stage,
            phase=window.phase_at(now),
            endpoint=call.endpoint,
            stream=call.stream,
            scheduled_ns=now if scheduled_ns is None else scheduled_ns,
            prompt_tokens_requested=call.prompt_tokens_requested,
            max_tokens=call.max_tokens,
            labels=call.labels,
            name=call.name,
            images=call.images,
            image_bytes=call.image_bytes,
        )
        record.asked_server_timings = self._asks and call.endpoint in _TIMED
        recorder = ResponseRecorder(record, self._timeouts, reader, window=window)
        headers = (*self._headers[call.stream], *self._api_headers.get(call.endpoint, ()), *call.headers,
                   ("X-Request-Id", request_id))  # fmt: skip
        if self._trace:
            ids = trace_ids(self._run_id, request_id)
            record.trace_id, record.span_id = ids
            headers = (*headers, (HEADER, ids.traceparent))
        http = HttpRequest("POST", self.request_path(call.endpoint), headers, call.body)
        if flight is None:
            return self._exchange(transport, http, recorder, cancel_after_s)
        flight.began(record)
        try:
            return self._exchange(transport, http, recorder, cancel_after_s)
        finally:
            flight.ended(record)

    @staticmethod
    def request_path(endpoint: Endpoint) -> str:
        return PATHS[endpoint]

    def _exchange(
        self,
        transport: Transport,
        http: HttpRequest,
        recorder: ResponseRecorder,
        cancel_after_s: float | None,
    ) -> RequestRecord:
        recorder.record.began_ns = self._clock()
        # The cancel is raised in this greenlet wherever it waits (connect, write, a read) and
        # unwinds the transport, which closes the connection on its way out, as a user's
        # client does when the user moves on.
        cancel = None if cancel_after_s is None else gevent.Timeout.start_new(cancel_after_s, Cancel)
        try:
            transport.exchange(http, recorder)
        except TransportFailure as failure:
            recorder.fail(self._clock(), failure.kind, failure.detail)
        except Cancel:
            transport.close()
            return recorder.cancelled(self._clock())
        except GreenletExit:
            transport.close()
            recorder.unfinished(self._clock())
            raise
        finally:
            if cancel is not None:
                cancel.close()
        done_ns = self._clock()
        try:
            # The reads that arrived meanwhile go before the bookkeeping (the answer's check,
            # the fold): a read that waits behind them is stamped late by as much.
            gevent.idle()
        finally:  # a kill meanwhile still ends a request that had finished
            recorder.finish(done_ns)
        return recorder.record


class Cancel(BaseException):
    """The client's own cancel of a request (``--cancel``). A BaseException, as gevent's
    Timeout is, so that no ``except Exception`` on the way up mistakes it for a failure."""


ANTHROPIC_VERSION = "2023-06-01"
# The APIs whose request is a conversation, and how each writes one.
_CONVERSATION_BODY = {"chat": chat_body, "responses": responses_body, "messages": messages_body}


def _limit(max_tokens: int | None, fields: Mapping[str, object] | None) -> int | None:
    """The output limit the record keeps: ``max_tokens``, or its newer name
    ``max_completion_tokens`` where only that was given."""
    given = fields or {}
    newer = given.get("max_completion_tokens", given.get("max_output_tokens"))
    return max_tokens if max_tokens is not None or not isinstance(newer, int) else newer


def _exact(body: bytes) -> bytes:
    # orjson returns its 8 KiB growth buffer whatever the length, and a body lives as long as
    # its request: an exact copy saves ~7 KB per in-flight stream (bench/memory.py).
    return memoryview(body).tobytes()
