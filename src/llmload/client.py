"""One request, end to end: prompt → body → transport → recorder → record.

The edge between the sans-I/O core and a transport. It knows gevent only to recognise that its
greenlet is being killed at the end of a run, so the in-flight stream is recorded as unfinished
(with its tokens) instead of vanishing: dropping it would bias results against long requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from greenlet import GreenletExit

from llmload.config import RequestConfig, Timeouts
from llmload.phases import Window
from llmload.protocol.payloads import chat_body, completions_body
from llmload.record import RequestRecord
from llmload.recorder import ResponseRecorder
from llmload.transport.base import HttpRequest, Transport, TransportFailure
from llmload.workload.prompts import Prompt


class ChatClient:
    """Builds and runs requests for one process; shared by all its users (it holds no state
    that changes per request)."""

    def __init__(
        self,
        request: RequestConfig,
        model: str,
        timeouts: Timeouts,
        clock: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self._request = request
        self._model = model
        self._timeouts = timeouts
        self._clock = clock
        headers = [("Content-Type", "application/json"), ("Accept", "text/event-stream")]
        if not request.stream:
            headers[1] = ("Accept", "application/json")
        if request.api_key:
            headers.append(("Authorization", f"Bearer {request.api_key}"))
        headers.extend(request.extra_headers)
        self._headers = tuple(headers)

    @property
    def path(self) -> str:
        return self._request.path

    def body(self, prompt: Prompt) -> bytes:
        r = self._request
        common = {
            "max_tokens": prompt.max_tokens,
            "stream": r.stream,
            "ignore_eos": r.ignore_eos,
            "extra": r.extra_body,
        }
        if r.endpoint == "chat":
            body = chat_body(self._model, prompt.messages, **common)  # type: ignore[arg-type]
        else:
            body = completions_body(self._model, prompt.text, **common)  # type: ignore[arg-type]
        # orjson returns its 8 KiB growth buffer whatever the length, and a body lives as long
        # as its request: an exact copy saves ~7 KB per in-flight stream (bench/memory.py).
        return memoryview(body).tobytes()

    def run(
        self,
        transport: Transport,
        prompt: Prompt,
        *,
        request_id: str,
        user: str,
        stage: int,
        window: Window,
        scheduled_ns: int | None = None,
        on_unfinished: Callable[[RequestRecord], None] | None = None,
        active: set[RequestRecord] | None = None,
    ) -> RequestRecord:
        """Send one request and return its record; failures are data on the record.

        If the greenlet is killed mid-request, the record is completed as unfinished and
        handed to ``on_unfinished`` before the kill proceeds. While in flight, the record is in
        ``active`` (if given), so live progress can count tokens before the request ends.
        """
        now = self._clock()
        record = RequestRecord(
            request_id=request_id,
            user=user,
            stage=stage,
            phase=window.phase_at(now),
            endpoint=self._request.endpoint,
            stream=self._request.stream,
            scheduled_ns=now if scheduled_ns is None else scheduled_ns,
            prompt_tokens_requested=prompt.prompt_tokens_requested,
            max_tokens=prompt.max_tokens,
            labels=prompt.labels,
        )
        recorder = ResponseRecorder(record, self._timeouts)
        if active is not None:
            active.add(record)
        headers = (*self._headers, ("X-Request-Id", request_id))
        http = HttpRequest("POST", self.path, headers, self.body(prompt))
        try:
            return self._exchange(transport, http, recorder, window, on_unfinished)
        finally:
            if active is not None:
                active.discard(record)

    def _exchange(
        self,
        transport: Transport,
        http: HttpRequest,
        recorder: ResponseRecorder,
        window: Window,
        on_unfinished: Callable[[RequestRecord], None] | None,
    ) -> RequestRecord:
        try:
            transport.exchange(http, recorder)
        except TransportFailure as failure:
            recorder.fail(self._clock(), failure.kind, failure.detail)
        except GreenletExit:
            transport.close()
            done = recorder.unfinished(self._clock())
            done.phase = window.phase_at(done.sent_ns or done.scheduled_ns)
            if on_unfinished is not None:
                on_unfinished(done)
            raise
        done = recorder.finish(self._clock())
        # Latency belongs to the window the request was *sent* in (docs/metrics.md).
        done.phase = window.phase_at(done.sent_ns or done.scheduled_ns)
        return done
