"""One request being generated: the per-event hot path.

An engine calls ``step(now_ns)`` once per decode step (or timer deadline) for every sequence it
holds; the generation decides how many tokens the event carries (1 first, then
``tokens_per_chunk``, or under speculative decoding one more than the draft tokens accepted that
step, the last the remainder), renders it and writes it in one ``write``. The first
write of a chat stream also carries the role-only event, the last also the usage event,
``[DONE]`` and the end of the chunked body: one write per stream per step, always.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from llmload.sim import api_render
from llmload.sim.http import HttpConnection
from llmload.sim.model import Speculation
from llmload.sim.render import (
    DONE_EVENT,
    LAST_CHUNK,
    VOCABULARY_BYTES,
    ChunkRenderer,
    completion_body,
    frame,
)
from llmload.sim.shapes import Shape, escaped
from llmload.sim.tokens import OutputPlan, SplitMix64, Token, TokenText, message_open, split_words
from llmload.sim.truth import RequestEntry, Truth

# What writes a stream's events: chat's and completions' chunks, or the newer APIs' typed events.
Renderer = ChunkRenderer | api_render.ResponsesRenderer | api_render.MessagesRenderer


class ResponseInfo(NamedTuple):
    """What identifies a response: shared by its body, its chunks and its ground-truth entry."""

    chat: bool
    response_id: str
    created: int
    model: str
    prompt_tokens: int
    include_usage: bool
    headers: tuple[tuple[str, str], ...]  # for a non-streamed body
    metrics: bool = False  # vLLM's --enable-per-request-metrics: the answer carries its timing
    api: str = "chat"  # chat, completions, responses (OpenAI's Responses API) or messages (Anthropic's)


class Generation:
    """A request in flight, from admission to its last event."""

    __slots__ = (
        "_accept_below",
        "_done_event",
        "_drafts",
        "_first_step_ns",
        "_renderer",
        "_shape",
        "_text",
        "adapter",
        "cached_tokens",
        "conn",
        "entry",
        "events",
        "generated",
        "hold_until_ns",
        "info",
        "k",
        "plan",
        "prompt",
        "prompt_tokens",
        "reasoning",
        "replica",
        "rng",
        "scheduled_ns",
        "session",
        "start_ns",
        "state",
        "truth",
        "written",
    )
    session: str | None  # the request's session key: what the router places it by
    replica: int | None  # the replica the router gave it (``replicas.py``)
    adapter: str | None  # the LoRA adapter its model names; None: the base model (``engine.py``)

    def __init__(
        self,
        *,
        info: ResponseInfo,
        plan: OutputPlan,
        text: TokenText,
        tokens_per_chunk: int,
        renderer: Renderer | None,
        entry: RequestEntry,
        conn: HttpConnection,
        truth: Truth,
        prompt: Sequence[Token] = (),
        shape: Shape | None = None,
        reasoning: int = 0,
        speculation: Speculation | None = None,
        rng: SplitMix64 | None = None,
    ) -> None:
        self.info = info
        # The plan's first ``reasoning`` tokens are thinking (``delta.reasoning_content``), the
        # rest the answer; 0 for a model that does not reason.
        self.reasoning = reasoning
        self._shape = shape  # a tool call's or JSON's form around the words (``shapes.py``)
        self.prompt_tokens = info.prompt_tokens  # read by the engine at every step
        self.prompt = prompt  # the tokens the prefill reads, for the prefix cache
        # Set by the engine at the first admission: prompt tokens the prefix cache held then
        # (vLLM's num_cached_tokens, reported in usage). None: not admitted yet.
        self.cached_tokens: int | None = None
        self.plan = plan
        self._text = text
        self.k = tokens_per_chunk
        # Under speculation each step proposes ``_drafts`` tokens; a draw below ``_accept_below``
        # (of 2**32) accepts the next. Fixed chunks of k count as k - 1 drafts, all accepted.
        self._drafts = tokens_per_chunk - 1 if speculation is None else speculation.draft_tokens
        self._accept_below = 0 if speculation is None else int(speculation.acceptance * 2**32)
        self.rng = rng if rng is not None else SplitMix64(0)
        self._renderer = renderer  # None: a non-streamed request, written whole at the end
        self._done_event = DONE_EVENT if renderer is None else renderer.done
        self.entry = entry
        self.conn = conn
        self.truth = truth
        self.generated = 0  # tokens produced by the engine (its KV-cache growth)
        self.written = 0  # tokens written to the socket
        self.events = 0
        self.hold_until_ns = 0  # a stall: the engine keeps the sequence but it emits nothing
        self.start_ns = entry.arrival_ns  # when the engine may start it (later under a stall)
        self.state = "active"  # "active", "done" or "cancelled"
        self._first_step_ns: int | None = None  # the step that produced the first token
        self.scheduled_ns: int | None = None  # set by the engine when it first admits it
        self.session = self.adapter = self.replica = None  # set by completions.py and the router

    @property
    def cancelled(self) -> bool:
        return self.state != "active"

    @property
    def planned_events(self) -> int:
        return 1 + -(-(self.plan.tokens - 1) // self.k)

    def on_disconnect(self) -> None:
        """The client went away: stop, and log what it got."""
        if self.state == "active":
            self.state = "cancelled"
            self._sync_entry()
            self.truth.finish(self.entry, "cancelled")

    def step(self, now_ns: int) -> bool:
        """Produce one event; return True when this sequence leaves the batch."""
        if self.state != "active":
            return True
        if self.hold_until_ns > now_ns:
            return False
        first = self.generated
        left = self.plan.tokens - first
        if first == 0:
            self._first_step_ns = now_ns
            n = 1
        else:
            n = self.k if not self._accept_below else self._speculated()
            n = n if n < left else left
        self.generated = first + n
        last = self.generated >= self.plan.tokens
        if self._renderer is None:
            if last:
                self.write_body()
            return last
        self._emit(first, n, last)
        return last

    def _speculated(self) -> int:
        """Tokens of one speculative step: the drafts accepted before the first rejection, + 1."""
        accepted = 0
        below, rng = self._accept_below, self.rng
        while accepted < self._drafts and (rng.next() & 0xFFFFFFFF) < below:
            accepted += 1
        return 1 + accepted

    def token_bytes(self, first: int, n: int) -> bytes:
        text = self._text
        if n == 1:
            return VOCABULARY_BYTES[text.index(first)]
        return b"".join(VOCABULARY_BYTES[text.index(i)] for i in range(first, first + n))

    def _emit(self, first: int, n: int, last: bool) -> None:
        renderer = self._renderer
        assert renderer is not None
        sent_ns = time.perf_counter_ns()
        total = first + n
        thinking = self.reasoning
        # The opening event goes first, and is rendered first: the newer APIs number their events.
        opening = renderer.role(sent_ns, self.cached_tokens or 0) if first == 0 and renderer.opens else b""
        if first < thinking:
            payload, events = self._thinking(renderer, first, n, last, sent_ns)
        else:
            text = self.token_bytes(first, n)
            if self._shape is not None:
                text = self._shaped(text, first == thinking, last)
            finish = self.plan.finish_reason if last else None
            payload, events = renderer.text(text, finish, total, sent_ns, first == thinking), 1
        if opening:
            payload = opening + payload
        if last:
            self.entry.last_token_ns = sent_ns
            if self.info.include_usage:
                payload += renderer.usage(
                    total,
                    sent_ns,
                    self.cached_tokens or 0,
                    self._reasoning_usage(total),
                    metrics=self.metrics(),
                    finish_reason=self.plan.finish_reason,
                )
            payload += self._done_event
            self.conn.write(frame(payload) + LAST_CHUNK)
        else:
            self.conn.write(frame(payload))
        if first <= thinking < total:
            self.entry.first_answer_ns = sent_ns
        self._count(n, sent_ns, events)
        if last:
            self.complete()

    def _thinking(
        self, renderer: Renderer, first: int, n: int, last: bool, sent_ns: int
    ) -> tuple[bytes, int]:
        """An event that starts in the thinking phase: its reasoning tokens as one event and,
        when it reaches past the thinking (``--tokens-per-chunk`` > 1), the answer's first
        tokens as a second event in the same write. Returns the payload and its events."""
        k = min(n, self.reasoning - first)
        finish = self.plan.finish_reason if last else None
        payload = renderer.reasoning(
            self.token_bytes(first, k), None if k < n else finish, first + k, sent_ns
        )
        if k == n:
            return payload, 1
        text = self.token_bytes(first + k, n - k)
        if self._shape is not None:
            text = self._shaped(text, True, last)
        return payload + renderer.text(text, finish, first + n, sent_ns, True), 2

    def metrics(self) -> dict[str, float | None] | None:
        """vLLM's per-request ``metrics`` of the answer, when the server reports them: from its
        engine's stamps as vLLM computes them (its TTFT runs from the first scheduling, not from
        arrival; its generation time is first to last token; its rate counts from the
        scheduling). None: not reported."""
        entry, scheduled = self.entry, self.scheduled_ns
        if not self.info.metrics or scheduled is None:
            return None
        # A body is written whole at the end: its first token was made at the first step.
        first = self._first_step_ns if self._renderer is None else entry.first_token_ns
        last = entry.last_token_ns
        if last is None:
            return None
        first = last if first is None else first  # a one-token stream: its last is its first
        n, decode_ms = self.generated, (last - first) / 1e6
        return {
            "time_to_first_token_ms": (first - scheduled) / 1e6,
            "generation_time_ms": decode_ms,
            "queue_time_ms": (scheduled - entry.arrival_ns) / 1e6,
            "mean_itl_ms": decode_ms / (n - 1) if n > 1 else None,
            "tokens_per_second": n * 1e9 / (last - scheduled) if last > scheduled else None,
        }

    def _reasoning_usage(self, total: int) -> int | None:
        """``completion_tokens_details.reasoning_tokens`` of ``total`` tokens; None: no thinking."""
        return min(self.reasoning, total) if self.reasoning else None

    def _shaped(self, text: bytes, first: bool, last: bool) -> bytes:
        shape = self._shape
        assert shape is not None
        if first:
            text = escaped(shape.open) + text
        if last:
            text += escaped(shape.close)
        return text

    def _count(self, n: int, sent_ns: int, events: int = 1) -> None:
        truth = self.truth
        truth.tokens_written_total += n
        truth.events_written_total += events
        if self.events == 0:
            truth.first_token(self.entry, sent_ns)
        elif self._drafts:
            truth.drafts_total += 1
            truth.draft_tokens_total += self._drafts
            truth.accepted_tokens_total += n - 1
        self.written += n
        self.events += events

    def body(self) -> bytes:
        """The whole non-streamed body for what was generated."""
        info = self.info
        tool = None if self._shape is None else self._shape.tool
        if info.api == "responses":
            return api_render.responses_body(
                response_id=info.response_id,
                created=info.created,
                model=info.model,
                text=self._whole_text(),
                finish_reason=self.plan.finish_reason,
                prompt_tokens=info.prompt_tokens,
                completion_tokens=self.generated,
                cached_tokens=self.cached_tokens or 0,
                reasoning=self._whole_reasoning(),
                metrics=self.metrics(),
                tool=tool,
            )
        if info.api == "messages":
            return api_render.messages_body(
                response_id=info.response_id,
                model=info.model,
                text=self._whole_text(),
                finish_reason=self.plan.finish_reason,
                prompt_tokens=info.prompt_tokens,
                completion_tokens=self.generated,
                cached_tokens=self.cached_tokens or 0,
                reasoning=self._whole_reasoning(),
                tool=tool,
            )
        return completion_body(
            chat=info.chat,
            response_id=info.response_id,
            created=info.created,
            model=info.model,
            text=self._whole_text(),
            finish_reason=self.plan.finish_reason,
            tool=tool,
            prompt_tokens=info.prompt_tokens,
            completion_tokens=self.generated,
            cached_tokens=self.cached_tokens or 0,
            reasoning=self._whole_reasoning(),
            metrics=self.metrics(),
        )

    def conversation(self) -> list[Token]:
        """The prompt and what was written of the answer, as the model would read them again:
        what a Responses API continuation (``previous_response_id``) starts from."""
        words = split_words(self._text.text(0, self.written).split(), Fraction(1))  # a token a word
        return [*self.prompt, *message_open("assistant"), *words]

    def _whole_reasoning(self) -> tuple[str, int] | None:
        thinking = self._reasoning_usage(self.generated)
        return None if thinking is None else (self._text.text(0, thinking), thinking)

    def _whole_text(self) -> str:
        start = min(self.reasoning, self.generated)
        words = self._text.text(start, self.generated - start)
        shape = self._shape
        return words if shape is None else shape.open + words + shape.close

    def write_body(self) -> None:
        """Write the non-streamed response, all tokens at once, and end the exchange."""
        sent_ns = time.perf_counter_ns()
        self.truth.tokens_written_total += self.generated
        self.entry.last_token_ns = sent_ns
        self.truth.first_token(self.entry, sent_ns)
        if self.generated > self.reasoning:
            self.entry.first_answer_ns = sent_ns
        self.written = self.generated
        self.conn.respond(200, list(self.info.headers), self.body())
        self.complete(finish_exchange=False)

    def complete(self, outcome: str = "ok", *, finish_exchange: bool = True) -> None:
        """The request ended as planned (or as its fault planned): log it, free the connection."""
        if self.state != "active":
            return
        self.state = "done"
        self._sync_entry()
        self.entry.finish_reason = self.plan.finish_reason if outcome == "ok" else None
        if self._shape is not None and self._shape.tool is not None and outcome == "ok":
            self.entry.tool_arguments = self._whole_text()
        self.truth.finish(self.entry, outcome)
        if finish_exchange:
            self.conn.finish()

    def _sync_entry(self) -> None:
        self.entry.completion_tokens = self.written
        self.entry.events = self.events
        self.entry.cached_tokens = self.cached_tokens or 0
        self.entry.scheduled_ns = self.scheduled_ns
        self.entry.replica = self.replica
        self.entry.reasoning_tokens = min(self.reasoning, self.written)
