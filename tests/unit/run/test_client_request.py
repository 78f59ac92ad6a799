"""What the client puts on the wire beside the body: the trace context, and vLLM's request for
its per-request metrics when the session decided to ask."""

from __future__ import annotations

import orjson

from llmload.config.asked import Endpoint, RequestConfig
from llmload.core.phases import Window
from llmload.core.timeouts import Timeouts
from llmload.errors import ErrorKind
from llmload.run.client import ApiClient
from llmload.transport.base import HttpRequest, ResponseSink, TransportFailure
from llmload.workload.prompts import SyntheticPrompts


class Capture:
    """A transport that keeps the request and fails it (the answer does not matter here)."""

    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        self.requests.append(request)
        raise TransportFailure(ErrorKind.CONNECT_ERROR, "not connected")

    def close(self) -> None:
        pass


def _send(client: ApiClient, request_id: str = "local-0-0") -> tuple[HttpRequest, str | None]:
    transport = Capture()
    prompt = SyntheticPrompts(8, 4).get(0, 0)
    record = client.run(transport, client.call(prompt, "chat"), request_id=request_id, user="u", stage=0,
                        window=Window())  # fmt: skip
    return transport.requests[0], record.trace_id


def test_every_request_carries_a_traceparent_named_by_its_record() -> None:
    client = ApiClient(RequestConfig(), "m", Timeouts(), run_id="run-a")
    request, trace_id = _send(client)
    headers = dict(request.headers)
    assert trace_id is not None and headers["traceparent"].startswith(f"00-{trace_id}-")
    assert _send(client, "local-0-1")[1] != trace_id


def test_a_traceparent_of_the_users_own_is_the_only_one_sent() -> None:
    config = RequestConfig(extra_headers=(("traceparent", "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"),))
    request, trace_id = _send(ApiClient(config, "m", Timeouts()))
    assert [v for k, v in request.headers if k.lower() == "traceparent"] == [config.extra_headers[0][1]]
    assert trace_id is None


def test_include_metrics_is_asked_only_when_the_session_decided_and_the_user_can_override_it() -> None:
    asked, record_asked = _body_and_flag(ApiClient(RequestConfig(), "m", Timeouts(), server_timings=True))
    assert asked["include_metrics"] is True and record_asked
    plain, plain_asked = _body_and_flag(ApiClient(RequestConfig(), "m", Timeouts()))
    assert "include_metrics" not in plain and not plain_asked
    theirs = RequestConfig(extra_body={"include_metrics": False})
    body, _ = _body_and_flag(ApiClient(theirs, "m", Timeouts(), server_timings=True))
    assert body["include_metrics"] is False


def test_a_messages_body_never_carries_include_metrics() -> None:
    # Anthropic's API refuses fields it does not know, and vLLM writes no metrics there
    client = ApiClient(RequestConfig(), "m", Timeouts(), server_timings=True)
    body, asked = _body_and_flag(client, "messages")
    assert "include_metrics" not in body and not asked
    responses, asked = _body_and_flag(client, "responses")
    assert responses["include_metrics"] is True and asked


def _body_and_flag(client: ApiClient, endpoint: Endpoint = "chat") -> tuple[dict[str, object], bool]:
    transport = Capture()
    prompt = SyntheticPrompts(8, 4).get(0, 0)
    record = client.run(
        transport, client.call(prompt, endpoint), request_id="r", user="u", stage=0, window=Window()
    )
    return orjson.loads(transport.requests[0].body), record.asked_server_timings
