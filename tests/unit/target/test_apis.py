"""Which APIs a server offers, from the status of an empty POST to each route."""

from __future__ import annotations

import httpx

from llmload.target.apis import line, offered

ANSWERS = {
    "/v1/responses": httpx.Response(400, json={"error": {"message": "'input' is required"}}),
    "/v1/messages": httpx.Response(404, json={"detail": "Not Found"}),
    "/v1/rerank": httpx.Response(501, json={"error": {"message": "Start it with `--reranking`"}}),
}


def test_each_status_says_what_it_can() -> None:
    asked: list[tuple[str, bytes]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":  # as llama.cpp: no route for GET
            return httpx.Response(404)
        asked.append((request.url.path, request.content))
        return ANSWERS[request.url.path]

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        apis = offered(client, "http://server", {"authorization": "Bearer k"})
    assert [body for _, body in asked] == [b"{}"] * 3  # nothing to generate
    assert apis["responses"] == {"offered": True, "status": 400, "said": None}
    assert apis["messages"] == {"offered": False, "status": 404, "said": "Not Found"}
    assert apis["rerank"] == {"offered": False, "status": 501, "said": "Start it with `--reranking`"}
    assert (
        line(apis)
        == "APIs: responses, no messages (HTTP 404), no rerank (HTTP 501 'Start it with `--reranking`')"
    )


def test_a_405_to_get_is_a_route_and_nothing_is_posted() -> None:
    asked: list[tuple[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:  # as vLLM's FastAPI, without rerank
        asked.append((request.method, request.url.path))
        return httpx.Response(405 if request.url.path != "/v1/rerank" else 404)

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        apis = offered(client, "http://server", {})
    assert asked == [
        ("GET", "/v1/responses"),
        ("GET", "/v1/messages"),
        ("GET", "/v1/rerank"),
        ("POST", "/v1/rerank"),
    ]
    assert [a["offered"] for a in apis.values()] == [True, True, False]


def test_an_auth_wall_or_a_failure_tells_nothing() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/rerank":
            raise httpx.ConnectError("refused")
        return httpx.Response(401 if request.url.path == "/v1/responses" else 503)

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        apis = offered(client, "http://server", {})
    assert {api: a["offered"] for api, a in apis.items()} == {
        "responses": None,
        "messages": None,
        "rerank": None,
    }
    assert apis["rerank"]["said"] == "ConnectError" and line(apis) is None
