"""``POST /v1/embeddings``: one forward pass over the inputs, answered whole.

The cost model is the batching model's prefill: an embedding request is a prompt with no
decode, so it takes one step of the profile's model with its inputs as the batch and their
tokens as the prefill (``ModelParams.step_ns(inputs, tokens)``), words counted as tokens as
for generation. It runs beside the generation engine rather than inside its batch: engines
serve embedding models as their own deployments, so a simulated mix of chat and embeddings
is two servers' worth of capacity at one address, and the embeddings' latency does not
depend on the chat load. Vectors are deterministic in the input text (a load test reads
their count and length, not their meaning).

``POST /v1/rerank`` (``rerank.py``) is the same kind of work: a cross-encoder reads each
(query, document) pair in one forward pass, so it is served here with the pairs as the batch.
"""

from __future__ import annotations

import asyncio
import math
import zlib
from collections.abc import Callable
from typing import NamedTuple

import orjson

from llmload.sim.config import SimConfig
from llmload.sim.http import HttpConnection, HttpRequest
from llmload.sim.jsonvalue import JSON
from llmload.sim.render import error_body
from llmload.sim.truth import Truth

DEFAULT_DIMENSIONS = 16
MAX_DIMENSIONS = 4096


class BadInput(ValueError):
    pass


class Pass(NamedTuple):
    """One forward pass a request asks for: its batch, its tokens, and the answer's body."""

    batch: int
    tokens: int
    answer: Callable[[str], bytes]  # the body, given the model's name


def embeddings_pass(body: JSON) -> Pass:
    texts, tokens, dimensions = parse_inputs(body)

    def answer(model: str) -> bytes:
        data = [
            {"object": "embedding", "index": i, "embedding": vector(text, dimensions)}
            for i, text in enumerate(texts)
        ]
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return orjson.dumps({"object": "list", "data": data, "model": model, "usage": usage})

    return Pass(len(texts), tokens, answer)


def parse_inputs(body: JSON) -> tuple[list[str], int, int]:
    """(the inputs as text, their tokens, the vector length asked for); raise ``BadInput``."""
    if not isinstance(body, dict):
        raise BadInput("body must be a JSON object")
    given = body.get("input")
    if isinstance(given, str):
        given = [given]
    if not isinstance(given, list) or not given:
        raise BadInput("input must be a string or a non-empty list")
    lists = [x for x in given if isinstance(x, list) and all(isinstance(t, int) for t in x)]
    if all(isinstance(x, str) for x in given):
        texts = [str(x) for x in given]
        tokens = sum(len(x.split()) for x in texts)
    elif all(isinstance(x, int) for x in given):
        texts, tokens = [" ".join(map(str, given))], len(given)
    elif len(lists) == len(given):
        texts, tokens = [" ".join(map(str, x)) for x in lists], sum(len(x) for x in lists)
    else:
        raise BadInput("input must be strings, token ids or lists of token ids")
    dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
    if (
        isinstance(dimensions, bool)
        or not isinstance(dimensions, int)
        or not 1 <= dimensions <= MAX_DIMENSIONS
    ):
        raise BadInput(f"dimensions must be an integer in [1, {MAX_DIMENSIONS}]")
    return texts, tokens, dimensions


def vector(text: str, dimensions: int) -> list[float]:
    """A unit vector that depends only on the text."""
    seed = zlib.crc32(text.encode())
    raw = [math.sin(seed + i * 0.618) for i in range(dimensions)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [round(x / norm, 6) for x in raw]


class Encoder:
    """Serves requests that are one forward pass each, beside the generation engine."""

    def __init__(self, config: SimConfig, truth: Truth, is_ready: Callable[[], bool]) -> None:
        self._config = config
        self._truth = truth
        self._is_ready = is_ready

    def handle(self, request: HttpRequest, conn: HttpConnection, parse: Callable[[JSON], Pass]) -> None:
        truth = self._truth
        entry = truth.begin(
            id=f"embd-sim-{truth.requests_total + 1}",
            client=conn.peer,
            client_request_id=request.headers.get("x-request-id"),
            traceparent=request.headers.get("traceparent"),
            path=request.path,
            stream=False,
            arrival_ns=request.arrival_ns,
        )
        if not self._is_ready():
            truth.finish(entry, "rejected")
            self._respond(conn, 503, error_body("the model is loading", "ServiceUnavailableError", 503))
            return
        try:
            body = orjson.loads(request.body)
            work = parse(body)
        except (orjson.JSONDecodeError, BadInput) as exc:
            truth.finish(entry, "rejected")
            self._respond(conn, 400, error_body(str(exc), "BadRequestError", 400, "input"))
            return
        entry.prompt_tokens = work.tokens
        delay_s = self._config.params.step_ns(work.batch, work.tokens) / 1e9
        model = body.get("model") if isinstance(body.get("model"), str) else self._config.model

        def answer() -> None:
            if conn.closed:
                truth.finish(entry, "cancelled")
                return
            out = work.answer(model)
            truth.finish(entry, "ok")
            self._respond(conn, 200, out)

        asyncio.get_running_loop().call_later(delay_s, answer)

    def _respond(self, conn: HttpConnection, status: int, body: bytes) -> None:
        headers = [("server", self._config.server_header), ("content-type", "application/json")]
        conn.respond(status, headers, body)
