"""``POST /v1/chat/completions`` and ``POST /v1/completions``: from a request to a generation.

Each request gets a ground-truth entry as it arrives, whatever becomes of it: refused during
startup, rejected as invalid, broken by a fault, cancelled by its client, or served.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import MappingProxyType

from llmload.sim.api_render import MessagesRenderer, ResponsesRenderer, messages_error_body
from llmload.sim.badrequest import BadRequest
from llmload.sim.config import SimConfig
from llmload.sim.engine import Engine
from llmload.sim.faults import DRIP_INTERVAL_S, FaultMode, FaultyGeneration, drip
from llmload.sim.generation import Generation, Renderer, ResponseInfo
from llmload.sim.http import HttpConnection, HttpRequest, response_head
from llmload.sim.render import LAST_CHUNK, ChunkRenderer, error_body, frame
from llmload.sim.request import GenRequest, parse_body
from llmload.sim.router import session_key
from llmload.sim.tokens import OutputPlan, SplitMix64, TokenText, plan_output, request_rng
from llmload.sim.truth import RequestEntry, Truth

# The generation routes and the API each speaks; the newer two are conversations read as chat's.
_APIS: Mapping[str, str] = MappingProxyType(
    {
        "/v1/chat/completions": "chat",
        "/v1/completions": "completions",
        "/v1/responses": "responses",
        "/v1/messages": "messages",
    }
)
_NEWER = frozenset({"responses", "messages"})
_ID_PREFIX = MappingProxyType(
    {"chat": "chatcmpl", "completions": "cmpl", "responses": "resp", "messages": "msg"}
)

_ERRORS: Mapping[FaultMode, tuple[int, str, str]] = MappingProxyType(
    {
        FaultMode.HTTP_400: (400, "BadRequestError", "simulated bad request"),
        FaultMode.HTTP_429: (429, "RateLimitError", "simulated rate limit"),
        FaultMode.HTTP_500: (500, "InternalServerError", "simulated server error"),
    }
)


class StoredResponses:
    """The Responses API's stored answers, by id, so that ``previous_response_id`` continues a
    conversation the client does not resend; the oldest go first past ``limit``."""

    def __init__(self, limit: int = 10_000) -> None:
        self._by_id: OrderedDict[str, Generation] = OrderedDict()
        self._limit = limit

    def keep(self, response_id: str, generation: Generation) -> None:
        self._by_id[response_id] = generation
        while len(self._by_id) > self._limit:
            self._by_id.popitem(last=False)

    def get(self, response_id: str) -> Generation | None:
        return self._by_id.get(response_id)


class Completions:
    """Turns generation requests into generations on the engine."""

    def __init__(
        self,
        config: SimConfig,
        truth: Truth,
        engine: Engine,
        is_ready: Callable[[], bool],
    ) -> None:
        self._config = config
        self._truth = truth
        self._engine = engine
        self._is_ready = is_ready
        self._tasks: set[asyncio.Task[None]] = set()  # slow drips in progress, kept referenced
        self._stored = StoredResponses()  # the Responses API's server-side conversations

    def handle(self, request: HttpRequest, conn: HttpConnection) -> None:
        api = _APIS[request.path]
        chat = api != "completions"  # a conversation: chat, responses or messages
        entry = self._truth.begin(
            id=f"{_ID_PREFIX[api]}-sim-{self._truth.requests_total + 1}",
            client=conn.peer,
            client_request_id=request.headers.get("x-request-id"),
            traceparent=request.headers.get("traceparent"),
            path=request.path,
            stream=False,
            arrival_ns=request.arrival_ns,
        )
        entry.session = session_key(request.headers, self._config.session_header)
        if not self._is_ready():
            self._reject(conn, entry, 503, "ServiceUnavailableError", "the model is loading", api=api)
            return
        try:
            gen_request = parse_body(
                request.body, chat, entry.id, self._config.tokens_per_word, api if api in _NEWER else None
            )
            mode = self._fault(request, gen_request, entry.index)
        except BadRequest as exc:
            self._reject(conn, entry, 400, "BadRequestError", exc.message, param=exc.param, api=api)
            return
        if gen_request.previous_response_id is not None:
            before = self._stored.get(gen_request.previous_response_id)
            if before is None:
                message = f"Previous response with id '{gen_request.previous_response_id}' not found."
                self._reject(conn, entry, 400, "invalid_request_error", message, param="previous_response_id")
                return
            prompt = [*before.conversation(), *gen_request.prompt]
            gen_request = gen_request._replace(prompt=prompt, prompt_tokens=len(prompt))
        entry.stream = gen_request.stream
        # An unknown name is served by the default model under that name, as always here
        entry.model = gen_request.model or self._config.model
        entry.prompt_tokens = gen_request.prompt_tokens
        entry.images = gen_request.images
        if mode is not None:
            entry.outcome = f"fault:{mode.value}"
            if self._answer_fault(mode, conn, entry):
                return
        generation = self._generation(request, gen_request, entry, conn, mode)
        generation.session = entry.session
        generation.adapter = entry.model if entry.model in self._config.adapters else None
        if api == "responses":
            self._stored.keep(entry.id, generation)
        self._start(generation, gen_request, request, mode)

    def _fault(self, request: HttpRequest, body: GenRequest, index: int) -> FaultMode | None:
        name = request.headers.get("x-sim-fault") or body.fault
        if not name:
            return self._config.faults.draw(index)
        try:
            return FaultMode(name)
        except ValueError:
            raise BadRequest(f"unknown fault mode {name!r}", "sim_fault") from None

    def _reject(
        self,
        conn: HttpConnection,
        entry: RequestEntry,
        status: int,
        kind: str,
        message: str,
        *,
        param: str | None = None,
        api: str = "chat",
    ) -> None:
        headers = self._headers(entry.id, "application/json")
        if status in (429, 503):
            headers.append(("retry-after", "1"))
        self._truth.finish(entry, "rejected")
        body = (
            messages_error_body(message, status)
            if api == "messages"
            else error_body(message, kind, status, param)
        )
        conn.respond(status, headers, body)

    def _answer_fault(self, mode: FaultMode, conn: HttpConnection, entry: RequestEntry) -> bool:
        """Faults answered without generating; True when the request is dealt with."""
        if mode in _ERRORS:
            status, kind, message = _ERRORS[mode]
            self._reject(conn, entry, status, kind, message)
        elif mode is FaultMode.REFUSE:
            self._truth.finish(entry)
            conn.close()
        elif mode is FaultMode.RESET:
            self._truth.finish(entry)
            conn.reset()
        else:
            return False
        return True

    def _headers(self, request_id: str, content_type: str) -> list[tuple[str, str]]:
        return [
            ("server", self._config.server_header),
            ("content-type", content_type),
            ("x-request-id", request_id),
        ]

    def _generation(
        self,
        request: HttpRequest,
        body: GenRequest,
        entry: RequestEntry,
        conn: HttpConnection,
        mode: FaultMode | None,
    ) -> Generation:
        config = self._config
        seed = config.seed if body.seed is None else body.seed
        rng = request_rng(seed, request.body)
        reasoning = min(config.reasoning_tokens, body.max_tokens) if body.chat else 0
        plan = _plan(rng, body, reasoning)
        if body.shape is not None and body.shape.tool is not None and plan.finish_reason == "stop":
            plan = dataclasses.replace(plan, finish_reason="tool_calls")  # the call is complete
        info = ResponseInfo(
            chat=body.chat,
            response_id=entry.id,
            created=int(time.time()),
            model=body.model or config.model,
            prompt_tokens=body.prompt_tokens,
            include_usage=body.include_usage,
            headers=tuple(self._headers(entry.id, "application/json")),
            metrics=config.per_request_metrics,
            api=_APIS[request.path],
        )
        cls = Generation if mode is None else FaultyGeneration
        return cls(
            info=info,
            plan=plan,
            text=TokenText.seeded(rng),
            tokens_per_chunk=config.tokens_per_chunk,
            renderer=renderer_for(
                info,
                tool=None if body.shape is None else body.shape.tool,
                continuous_usage=body.continuous_usage,
                emit_timestamps=config.emit_timestamps,
            )
            if body.stream
            else None,
            entry=entry,
            conn=conn,
            truth=self._truth,
            prompt=body.prompt,
            shape=body.shape,
            reasoning=reasoning,
            speculation=None if config.timing else config.params.speculation,
            rng=SplitMix64(rng.next()),
        )

    def _start(
        self,
        generation: Generation,
        body: GenRequest,
        request: HttpRequest,
        mode: FaultMode | None,
    ) -> None:
        conn = generation.conn
        conn.exchange = generation
        if mode is FaultMode.SLOW_DRIP:
            self._drip(generation, body.stream, request.keep_alive)
            return
        if body.stream:
            head = self._headers(generation.info.response_id, "text/event-stream; charset=utf-8")
            head.append(("cache-control", "no-cache"))
            conn.write(response_head(200, head, content_length=None, keep_alive=request.keep_alive))
        stall_ms = request.headers.get("x-sim-stall-ms")
        after = request.headers.get("x-sim-fault-after")
        if isinstance(generation, FaultyGeneration) and mode is not None:
            generation.arm(
                mode,
                int(after) if after and after.isdigit() else body.fault_after,
                int(stall_ms) if stall_ms and stall_ms.isdigit() else body.stall_ms,
            )
            if mode is FaultMode.STALL_FIRST:
                generation.start_ns += generation.stall_ns
                delay_s = generation.stall_ns / 1e9
                asyncio.get_running_loop().call_later(delay_s, self._engine.submit, generation)
                return
        self._engine.submit(generation)

    def _drip(self, generation: Generation, stream: bool, keep_alive: bool) -> None:
        """Render the whole response now and write it one byte per 100 ms."""
        data = drip_bytes(generation, stream, keep_alive)
        conn = generation.conn

        def write(piece: bytes) -> bool:
            if conn.closed:
                return False
            conn.write(piece)
            return True

        async def run() -> None:
            await drip(write, data, DRIP_INTERVAL_S)
            if not conn.closed:
                generation.written = generation.plan.tokens
                self._truth.tokens_written_total += generation.plan.tokens
                generation.complete()

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _plan(rng: SplitMix64, body: GenRequest, reasoning: int) -> OutputPlan:
    """The output plan: ``reasoning`` thinking tokens first, out of the ``max_tokens`` budget as
    on vLLM, then an answer planned on what is left exactly as without thinking."""
    if not reasoning:
        return plan_output(rng, body.max_tokens, body.min_tokens, body.ignore_eos)
    left = body.max_tokens - reasoning
    if left == 0:  # the thinking used the whole budget: cut off, no answer
        return OutputPlan(reasoning, "length")
    answer = plan_output(rng, left, max(0, body.min_tokens - reasoning), body.ignore_eos)
    return OutputPlan(reasoning + answer.tokens, answer.finish_reason)


def renderer_for(
    info: ResponseInfo, *, tool: tuple[str, str] | None, continuous_usage: bool, emit_timestamps: bool
) -> Renderer:
    """The stream's renderer in the API the request came to (chat's renderer for chat and
    completions); ``tool``: its words are that call's arguments."""
    if info.api == "responses":
        return ResponsesRenderer(
            response_id=info.response_id,
            created=info.created,
            model=info.model,
            prompt_tokens=info.prompt_tokens,
            tool=tool,
        )
    if info.api == "messages":
        return MessagesRenderer(
            response_id=info.response_id, model=info.model, prompt_tokens=info.prompt_tokens, tool=tool
        )
    return ChunkRenderer(
        chat=info.chat,
        response_id=info.response_id,
        created=info.created,
        model=info.model,
        prompt_tokens=info.prompt_tokens,
        continuous_usage=continuous_usage,
        emit_timestamps=emit_timestamps,
        tool=tool,
    )


def drip_bytes(generation: Generation, stream: bool, keep_alive: bool) -> bytes:
    """The complete response of a slow drip: every token in one event when streamed."""
    info = generation.info
    generation.generated = generation.plan.tokens
    if not stream:
        body = generation.body()
        head = response_head(200, list(info.headers), content_length=len(body), keep_alive=keep_alive)
        return head + body
    renderer = renderer_for(info, tool=None, continuous_usage=False, emit_timestamps=False)
    # every token in one event, in the API's own shape (its opening event first, where it has one)
    tokens = generation.token_bytes(0, generation.plan.tokens)
    events = renderer.role(0) if renderer.opens else b""
    events += renderer.text(tokens, generation.plan.finish_reason, generation.plan.tokens, 0)
    if info.include_usage:
        events += renderer.usage(generation.plan.tokens, 0, 0, finish_reason=generation.plan.finish_reason)
    headers = [*info.headers[:1], ("content-type", "text/event-stream; charset=utf-8")]
    head = response_head(200, headers, content_length=None, keep_alive=keep_alive)
    return head + frame(events + renderer.done) + LAST_CHUNK
