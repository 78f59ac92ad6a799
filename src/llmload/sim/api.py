"""Routing: every endpoint the simulator serves, and the JSON answers that need no engine.

OpenAI: ``POST /v1/chat/completions``, ``POST /v1/completions`` (``completions.py``),
``POST /v1/embeddings`` (``embeddings.py``), ``POST /v1/rerank`` (``rerank.py``),
``GET /v1/models``, ``POST /tokenize``. Engine fingerprints:
``GET /health``, ``/version``, ``/get_server_info``, ``/metrics``. Ground truth:
``GET /sim/requests``, ``/sim/counters``, ``/sim/timeline``, ``/sim/stats``, ``/sim/config``.
Everything but ground truth and metrics waits out the startup delay; in hang mode nothing is
ever answered. With ``--api-key``, as vLLM's, the ``/v1`` routes answer 401 without the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TypeAlias
from urllib.parse import parse_qs

import orjson

from llmload.sim import fingerprint
from llmload.sim.badrequest import BadRequest
from llmload.sim.completions import Completions
from llmload.sim.config import SimConfig
from llmload.sim.embeddings import Encoder, Pass, embeddings_pass
from llmload.sim.engine import Engine
from llmload.sim.gpu import SimGpu
from llmload.sim.http import HttpConnection, HttpRequest
from llmload.sim.jsonvalue import JSON
from llmload.sim.metrics import render_metrics
from llmload.sim.render import error_body
from llmload.sim.request import tokenize_answer
from llmload.sim.rerank import rerank_pass
from llmload.sim.truth import Truth

_GENERATION_PATHS = frozenset({"/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages"})
# Each engine's way to drop its prefix cache, served by the profiles that imitate it.
# Requests that are one forward pass each, served beside the engine (``embeddings.py``)
_PASSES: Mapping[str, Callable[[JSON], Pass]] = MappingProxyType(
    {"/v1/embeddings": embeddings_pass, "/v1/rerank": rerank_pass}
)
_CACHE_RESETS = (("vllm", "/reset_prefix_cache"), ("sglang", "/flush_cache"))
# vLLM (with --profiler-config) and SGLang: the torch profiler over what runs between the two
_PROFILER_ENGINES = frozenset({"vllm", "sglang"})
_PROFILER_PATHS = frozenset({"/start_profile", "/stop_profile"})
Answer: TypeAlias = tuple[int, JSON | bytes]  # an HTTP status and its JSON body (bytes: as they are)


class App:
    """The request handler given to every connection."""

    def __init__(
        self,
        config: SimConfig,
        truth: Truth,
        engine: Engine,
        is_ready: Callable[[], bool],
        port: Callable[[], int],
    ) -> None:
        self._config = config
        self._truth = truth
        self._engine = engine
        self._is_ready = is_ready
        self._port = port
        self._created = int(time.time())
        self._gpu = SimGpu(truth) if config.dcgm else None
        self._completions = Completions(config, truth, engine, is_ready)
        self._encoder = Encoder(config, truth, is_ready)
        self._routes: dict[str, Callable[[HttpRequest], Answer]] = {
            "/v1/models": self._models,
            "/health": self._health,
            "/version": self._version,
            "/get_server_info": self._server_info,
            "/server_info": self._vllm_server_info,
            "/sim/requests": lambda r: (200, truth.requests()),
            "/sim/counters": lambda r: (200, self._counters()),
            "/sim/timeline": self._timeline,
            "/sim/stats": lambda r: (200, truth.stats(_since_ns(r))),
            "/sim/config": lambda r: (200, fingerprint.sim_settings(config)),
        }

    def __call__(self, request: HttpRequest, conn: HttpConnection) -> None:
        if self._config.hang:
            return  # accept, read, never answer
        path = request.path
        if not self._authorized(request):
            self._json(conn, 401, error_body("Invalid API key", "AuthenticationError", 401))
            return
        if path in _GENERATION_PATHS:
            if request.method != "POST":
                self._json(conn, 405, _error("use POST", 405))
            else:
                self._completions.handle(request, conn)
            return
        one_pass = _PASSES.get(path)
        if one_pass is not None:
            if request.method != "POST":
                self._json(conn, 405, _error("use POST", 405))
            else:
                self._encoder.handle(request, conn, one_pass)
            return
        if path == "/tokenize" and self._config.tokenize_route:
            self._tokenize(request, conn)
            return
        if (self._config.profile.engine, path) in _CACHE_RESETS:
            self._reset_cache(request, conn)
            return
        if path in _PROFILER_PATHS and self._config.profile.engine in _PROFILER_ENGINES:
            self._profiler(request, conn, start=path == "/start_profile")
            return
        if path == "/metrics":
            headers = [("server", self._config.server_header)]
            headers.append(("content-type", "text/plain; version=0.0.4; charset=utf-8"))
            conn.respond(200, headers, self._metrics())
            return
        route = self._routes.get(path)
        if route is None:
            self._json(conn, 404, _error(f"no route {path}", 404))
        elif request.method not in ("GET", "HEAD"):
            self._json(conn, 405, _error("use GET", 405))
        else:
            status, body = route(request)
            self._json(conn, status, body)

    def _authorized(self, request: HttpRequest) -> bool:
        """vLLM guards only the /v1 routes: health, metrics and the engine's own stay open."""
        key = self._config.api_key
        if key is None or not request.path.startswith("/v1"):
            return True
        headers = request.headers
        return headers.get("authorization") == f"Bearer {key}" or headers.get("x-api-key") == key

    def _tokenize(self, request: HttpRequest, conn: HttpConnection) -> None:
        """vLLM's, SGLang's and llama.cpp's ``POST /tokenize``, by the simulator's tokenizer."""
        if request.method != "POST":
            self._json(conn, 405, _error("use POST", 405))
            return
        try:
            status, answer = self._not_ready() or tokenize_answer(request.body, self._config.tokens_per_word)
        except BadRequest as exc:
            status, answer = 400, error_body(exc.message, "BadRequestError", 400, exc.param)
        self._json(conn, status, answer)

    def _reset_cache(self, request: HttpRequest, conn: HttpConnection) -> None:
        if request.method != "POST":
            self._json(conn, 405, _error("use POST", 405))
            return
        self._json(conn, 200, {"dropped_tokens": self._engine.reset_prefix_cache()})

    def _profiler(self, request: HttpRequest, conn: HttpConnection, *, start: bool) -> None:
        """Records when profiling started and stopped (``/sim/counters``), as a test's truth."""
        if request.method != "POST":
            self._json(conn, 405, _error("use POST", 405))
            return
        now = time.perf_counter_ns()
        if start:
            self._truth.profile_start_ns, self._truth.profile_stop_ns = now, 0
        else:
            self._truth.profile_stop_ns = now
        conn.respond(200, [("server", self._config.server_header)], b"")

    def _json(self, conn: HttpConnection, status: int, body: JSON | bytes) -> None:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        headers = [("server", self._config.server_header), ("content-type", "application/json")]
        conn.respond(status, headers, raw)

    def _not_ready(self) -> Answer | None:
        if self._is_ready():
            return None
        return 503, _error("the model is loading", 503)

    def _health(self, request: HttpRequest) -> Answer:
        return self._not_ready() or (200, b"")

    def _models(self, request: HttpRequest) -> Answer:
        return self._not_ready() or (200, fingerprint.models(self._config, self._created))

    def _version(self, request: HttpRequest) -> Answer:
        return 200, fingerprint.version(self._config)

    def _server_info(self, request: HttpRequest) -> Answer:
        info = fingerprint.server_info(self._config, self._port())
        if info is None:
            return 404, _error("no route /get_server_info", 404)
        return 200, info

    def _vllm_server_info(self, request: HttpRequest) -> Answer:
        info = fingerprint.vllm_server_info(self._config)
        if info is None:
            return 404, _error("no route /server_info", 404)
        return 200, info

    def _timeline(self, request: HttpRequest) -> Answer:
        return 200, self._truth.timeline(_since_ns(request))

    def _counters(self) -> dict[str, int]:
        return self._truth.counters(self._engine.running_count, self._engine.waiting_count)

    def _metrics(self) -> bytes:
        engine = self._engine
        # each replica has its own KV budget: the usage is of all of them together
        kv_usage = engine.kv_tokens / (self._config.params.kv_budget_tokens * self._config.replicas)
        gpu = b"" if self._gpu is None else ("\n".join(self._gpu.render(kv_usage)) + "\n").encode()
        return gpu + render_metrics(
            self._truth,
            model=self._config.model,
            running=engine.running_count,
            waiting=engine.waiting_count,
            kv_usage=kv_usage,
            speculative=self._config.speculative,
            engine=self._config.profile.engine,
            cache=engine.cache_stats,
        )


def _since_ns(request: HttpRequest) -> int:
    since = parse_qs(request.query).get("since_ns", ["0"])[0]
    return int(since) if since.lstrip("-").isdigit() else 0


def _error(message: str, code: int) -> bytes:
    return error_body(message, "NotFoundError" if code == 404 else "Error", code)
