"""How fast one stream of the server decodes: the rate a plan sizes the client by.

A closed-loop stream receives at most what one request alone receives: batching only slows each
stream down. So one streamed request at concurrency 1, timed from its second token-bearing event
to its last, bounds the events per second each planned stream will bring the client. The bound
is loose on a GPU server at high concurrency (each stream slows as the batch grows), which makes
a plan ask for more processes than it needs, never fewer.

The first token-bearing event is left out of the span: it rides on the response's first read
with the headers and the role chunk, behind the server's admission work, so its gap to the next
event is not a decode step (against ``llmload sim --step-ms 20`` it measured 19.05-19.77 ms, the
later gaps 19.9-20.2 ms).
"""

from __future__ import annotations

import time

import httpx

from llmload.protocol.chunks import BadChunk, parse_chunk
from llmload.target.fingerprint import auth_headers, base_url

PROBE_TOKENS = 48
_TIMEOUT_S = 60.0


def stream_rate(
    host: str, model: str | None, api_key: str | None, *, max_tokens: int = PROBE_TOKENS
) -> float | None:
    """Token-bearing events per second of one streamed chat request, from its second such event
    to its last; None when the server did not stream at least three (the run itself will then
    say why)."""
    url = base_url(host)
    headers = auth_headers(api_key)
    try:
        with httpx.Client(timeout=_TIMEOUT_S) as client:
            name = model or _first_model(client, url, headers)
            if name is None:
                return None
            body = {
                "model": name,
                "messages": [{"role": "user", "content": "Count from one to one hundred in words."}],
                "max_tokens": max_tokens,
                "stream": True,
                "ignore_eos": True,
            }
            stamps = _event_stamps(client, url, headers, body)
    except httpx.HTTPError:
        return None
    steps = stamps[1:]
    if len(steps) < 2 or steps[-1] <= steps[0]:
        return None
    return (len(steps) - 1) / ((steps[-1] - steps[0]) / 1e9)


def _first_model(client: httpx.Client, url: str, headers: dict[str, str]) -> str | None:
    response = client.get(url + "/v1/models", headers=headers)
    if response.status_code != 200:
        return None
    try:
        return str(response.json()["data"][0]["id"])
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _event_stamps(
    client: httpx.Client, url: str, headers: dict[str, str], body: dict[str, object]
) -> list[int]:
    """The arrival of each token-bearing event (the one definition, ``protocol/chunks.py``)."""
    stamps: list[int] = []
    with client.stream("POST", url + "/v1/chat/completions", json=body, headers=headers) as response:
        if response.status_code != 200:
            return stamps
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            now = time.perf_counter_ns()
            try:
                bearing = parse_chunk(line[6:].encode()).token_bearing
            except BadChunk:
                continue
            if bearing:
                stamps.append(now)
    return stamps
