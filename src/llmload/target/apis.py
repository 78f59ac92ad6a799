"""Which of the newer APIs llmload speaks a server offers, asked once with the fingerprint.

Each route is first asked with a GET: a 405 (FastAPI's answer, vLLM's and SGLang's, for a
POST route) says the route is there and no request reaches the engine. Where GET gives 404
(cpp-httplib, llama.cpp's, routes by method too), an empty JSON body (``{}``) is POSTed:
nothing is generated and nothing is cached, and the status says enough. 404 or 405: the server
has no such route. 501: it has the route but was not started for it (llama.cpp's
``/v1/rerank`` without ``--reranking``), and its message says how. 400 or 422 for the empty
body means the route is there, and so does a 500 (llama.cpp's ``/v1/messages`` raises on it):
a handler ran. 401, 403 and 502 to 504 tell nothing (an auth wall, a gateway, an overload).
Offered is all it means: a route may still refuse the model it serves (vLLM's rerank wants a
scoring model), which the run's requests will say.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from llmload.protocol.jsonvalue import JSON

ROUTES: Mapping[str, str] = {
    "responses": "/v1/responses",
    "messages": "/v1/messages",
    "rerank": "/v1/rerank",
}
_ABSENT = frozenset({404, 405})
_MESSAGE_CHARS = 200


def _message(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return response.text[:_MESSAGE_CHARS] or None
    error = body.get("error") if isinstance(body, dict) else None
    found = error.get("message") if isinstance(error, dict) else None
    if found is None and isinstance(body, dict):
        found = body.get("message", body.get("detail"))
    return str(found)[:_MESSAGE_CHARS] if found is not None else None


def offered(client: httpx.Client, url: str, headers: Mapping[str, str]) -> dict[str, JSON]:
    """Per API: ``{"offered": true | false | null, "status": N, "said": ...}``; null where the
    answer tells nothing (no answer, an auth wall, a 5xx other than 501)."""
    out: dict[str, JSON] = {}
    ask = {**headers, "content-type": "application/json"}
    for api, path in ROUTES.items():
        try:
            response = client.get(url + path, headers=headers)
            if response.status_code == 405:
                out[api] = {"offered": True, "status": 405, "said": None}
                continue
            response = client.post(url + path, content=b"{}", headers=ask)
        except httpx.HTTPError as exc:
            out[api] = {"offered": None, "status": None, "said": type(exc).__name__}
            continue
        status = response.status_code
        known: bool | None
        if status in _ABSENT or status == 501:
            known = False
        elif status in (401, 403) or status > 501:  # an auth wall, a gateway, an overload
            known = None
        else:
            known = True
        said = _message(response) if status == 501 or known is not True else None
        out[api] = {"offered": known, "status": status, "said": said}
    return out


def line(apis: Mapping[str, JSON]) -> str | None:
    """One line for the console: what is offered, and what is not and why."""
    parts = []
    for api, answer in apis.items():
        if not isinstance(answer, Mapping):
            continue
        if answer.get("offered") is True:
            parts.append(api)
        elif answer.get("offered") is False:
            said = answer.get("said")
            reason = f"HTTP {answer.get('status')}" + (
                f" {said!r}" if said and answer.get("status") == 501 else ""
            )
            parts.append(f"no {api} ({reason})")
    return "APIs: " + ", ".join(parts) if parts else None
