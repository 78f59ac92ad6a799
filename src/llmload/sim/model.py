"""The performance model: continuous batching, as a pure function of the batch.

The engine (``engine.py``) runs decode steps back to back. One step takes

    step = base + per_seq * running + per_seq2 * running**2 + prefill_per_token * admitted_prompt

where ``running`` counts every sequence in the batch during the step and ``admitted_prompt`` the
prompt tokens of the sequences admitted into it that the prefix cache (``prefix_cache.py``) does
not hold (a re-admitted, preempted sequence recomputes its generated tokens and the part of its
prompt no longer cached). Each step emits one event per running sequence: the first event
of a sequence carries 1 token (at the end of its admission step: that is its TTFT), each later one
``tokens_per_chunk`` tokens, the last the remainder. ``per_seq2`` makes throughput peak at an
interior concurrency; ``max_running`` and ``kv_budget_tokens`` cap the batch, beyond which
requests queue.

The analytic side below describes the steady state of a closed loop of ``C`` users, each sending
its next request as soon as the previous one completes, the workload of a concurrency sweep:

- a request occupies the batch for ``S = events_per_request(N, K)`` steps;
- with ``C >= 2`` a returning user arrives while a step is running (its own last event ended the
  previous one) and waits for the next boundary: one step out of the batch per cycle, so
  ``running = C * S / (S + 1)``; a single user finds the engine idle and starts at once;
- ``running`` is capped by ``max_running`` and by the KV budget over the mean KV footprint of a
  running sequence (``prompt + N / 2``); the excess queues;
- completions per step are ``running / S``, each adding its prefill to the mean step time.

Output throughput is then ``running * (N / S) / mean_step``: tokens per second of wall time over
whole request cycles, prefill included, as a client measures it over a long window.

Speculative decoding (``Speculation``): each step a drafter proposes ``k`` tokens per sequence
and the model verifies them in the same forward pass; each is accepted with probability ``a``
until the first rejection, and the step emits the accepted ones plus the model's own next token,
``1 + X`` tokens with ``E[1 + X] = (1 - a**(k+1)) / (1 - a)``. Its cost: the drafter's ``k``
small passes (``draft_ns`` each, batch-independent at the sizes that matter) and the verification
of ``k`` more tokens per sequence (``verify_cost`` of a sequence's per-step cost each). At one
stream the step is bound by reading the weights, so verifying is nearly free and throughput
rises by about ``E / (1 + k * draft / base)``; near a full batch the step is bound by per-sequence
work that grew ``1 + k * verify_cost`` times for ``E`` tokens, and speculation costs throughput:
the crossover published for EAGLE-style drafters.

The analytic side assumes no prompt shares a full first block with an earlier one, so every
prompt token is prefilled: llmload's default workload, which starts each prompt with a salt word
unique to the request. Prompts that share a prefix make the engine faster than predicted here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llmload.sim.tokens import chat_prompt_tokens

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000

# The default sweep workload: one user message of 128 words, 256 output tokens.
DEFAULT_PROMPT_TOKENS = chat_prompt_tokens(128, 1)
DEFAULT_OUTPUT_TOKENS = 256
DEFAULT_SWEEP: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True, slots=True)
class Speculation:
    """A drafter: ``draft_tokens`` proposed per step, each accepted with ``acceptance`` in turn."""

    draft_tokens: int
    acceptance: float
    draft_ns: int  # one drafter pass (of the whole batch)
    verify_cost: float = 1.0  # a verified draft token's share of a sequence's per-step cost

    def __post_init__(self) -> None:
        if self.draft_tokens < 1 or not 0.0 <= self.acceptance < 1.0:
            raise ValueError("draft_tokens must be >= 1 and acceptance in [0, 1)")
        if self.draft_ns < 0 or self.verify_cost < 0:
            raise ValueError("draft_ns and verify_cost must be >= 0")

    def token_odds(self) -> tuple[float, ...]:
        """P(a step emits 1 + j tokens), j = 0..draft_tokens."""
        a, k = self.acceptance, self.draft_tokens
        return (*((a**j) * (1 - a) for j in range(k)), a**k)

    @property
    def mean_tokens_per_step(self) -> float:
        a = self.acceptance
        return (1 - a ** (self.draft_tokens + 1)) / (1 - a)


@dataclass(frozen=True, slots=True)
class ModelParams:
    """Parameters of the batching model; durations in integer nanoseconds."""

    step_base_ns: int
    step_per_seq_ns: int
    step_per_seq2_ns: int = 0
    prefill_per_token_ns: int = 0
    max_running: int = 256
    kv_budget_tokens: int = 1_000_000
    tokens_per_chunk: int = 1
    prefix_cache_tokens: int = 0  # capacity of the prefix cache; 0: no prefix caching
    speculation: Speculation | None = None

    def __post_init__(self) -> None:
        if min(self.step_base_ns, self.step_per_seq_ns, self.step_per_seq2_ns) < 0:
            raise ValueError("step times must be >= 0")
        if self.prefill_per_token_ns < 0:
            raise ValueError("prefill time must be >= 0")
        if self.max_running < 1 or self.kv_budget_tokens < 1 or self.tokens_per_chunk < 1:
            raise ValueError("max_running, kv_budget_tokens and tokens_per_chunk must be >= 1")
        if self.prefix_cache_tokens < 0:
            raise ValueError("prefix_cache_tokens must be >= 0")
        if self.speculation is not None and self.tokens_per_chunk != 1:
            raise ValueError("speculation sets the tokens per step: tokens_per_chunk must be 1")

    @property
    def max_tokens_per_step(self) -> int:
        """The most tokens one sequence gains in a step (its KV growth)."""
        spec = self.speculation
        return self.tokens_per_chunk if spec is None else 1 + spec.draft_tokens

    def step_ns(self, running: float, prefill_tokens: float) -> float:
        """Duration of one step with ``running`` sequences and ``prefill_tokens`` admitted."""
        per_seq: float = self.step_per_seq_ns
        base = self.step_base_ns
        spec = self.speculation
        if spec is not None and running:
            per_seq *= 1 + spec.draft_tokens * spec.verify_cost
            base += spec.draft_tokens * spec.draft_ns
        return (
            base
            + running * (per_seq + running * self.step_per_seq2_ns)
            + prefill_tokens * self.prefill_per_token_ns
        )


@dataclass(frozen=True, slots=True)
class FixedTiming:
    """Test timing: first token ``ttft_ns`` after arrival, then one event every ``step_ns``."""

    ttft_ns: int
    step_ns: int
    tokens_per_chunk: int = 1

    def __post_init__(self) -> None:
        if self.ttft_ns < 0 or self.step_ns <= 0 or self.tokens_per_chunk < 1:
            raise ValueError("ttft must be >= 0, step > 0, tokens_per_chunk >= 1")


def events_per_request(output_tokens: int, tokens_per_chunk: int) -> int:
    """Events (and batch steps) a request of ``output_tokens`` tokens takes."""
    if output_tokens <= 0:
        return 0
    return 1 + math.ceil((output_tokens - 1) / tokens_per_chunk)


def steps_per_request(params: ModelParams, output_tokens: int) -> float:
    """Batch steps a request takes, on average: its events, or under speculation the expected
    steps to emit the tokens after the first (exact, by recursion over the tokens left)."""
    spec = params.speculation
    if spec is None or output_tokens <= 1:
        return float(events_per_request(output_tokens, params.tokens_per_chunk))
    odds = spec.token_odds()
    steps = [0.0] * output_tokens  # steps[n]: expected steps to emit n more tokens
    for n in range(1, output_tokens):
        steps[n] = 1.0 + sum(p * steps[max(0, n - 1 - j)] for j, p in enumerate(odds))
    return 1.0 + steps[output_tokens - 1]


@dataclass(frozen=True, slots=True)
class SteadyState:
    """Mean behaviour of the engine under a closed loop of users."""

    running: float  # mean sequences in the batch
    step_ns: float  # mean step duration
    tokens_per_step: float  # output tokens per step, all sequences together

    @property
    def output_tok_per_s(self) -> float:
        return self.tokens_per_step * NS_PER_S / self.step_ns


def effective_max_running(params: ModelParams, prompt_tokens: int, output_tokens: int) -> float:
    """The batch size the caps allow: ``max_running`` or what fits the KV budget."""
    footprint = prompt_tokens + output_tokens / 2
    return min(float(params.max_running), max(1.0, params.kv_budget_tokens / footprint))


def mean_running(params: ModelParams, concurrency: int, prompt_tokens: int, output_tokens: int) -> float:
    """Mean sequences in the batch with ``concurrency`` closed-loop users."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    steps = steps_per_request(params, output_tokens)
    in_batch = 1.0 if concurrency == 1 else concurrency * steps / (steps + 1)
    return min(in_batch, effective_max_running(params, prompt_tokens, output_tokens))


def steady_state(
    params: ModelParams,
    concurrency: int,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> SteadyState:
    steps = steps_per_request(params, output_tokens)
    running = mean_running(params, concurrency, prompt_tokens, output_tokens)
    step = params.step_ns(running, running / steps * prompt_tokens)
    return SteadyState(running, step, running * output_tokens / steps)


def stage_output_tok_per_s(
    params: ModelParams,
    concurrency: int,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> float:
    """Output tok/s of a closed-loop stage at ``concurrency``, over whole request cycles."""
    return steady_state(params, concurrency, prompt_tokens, output_tokens).output_tok_per_s


def per_stream_decode_tok_per_s(
    params: ModelParams,
    concurrency: int,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> float:
    """One stream's decode speed ``(N - 1) / (last_token - first_token)`` in steady state.

    The steps a stream decodes through hold itself plus the other users' mean batch share, and
    carry the other users' prefills, but not its own (that was in its first step).
    """
    steps = steps_per_request(params, output_tokens)
    if steps < 2:
        raise ValueError("decode speed needs at least 2 output tokens")
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    others = (concurrency - 1) * steps / (steps + 1)
    running = min(effective_max_running(params, prompt_tokens, output_tokens), 1.0 + others)
    step = params.step_ns(running, (running - 1.0) / steps * prompt_tokens)
    return (output_tokens - 1) * NS_PER_S / ((steps - 1) * step)


def fixed_stage_output_tok_per_s(
    timing: FixedTiming, concurrency: int, output_tokens: int = DEFAULT_OUTPUT_TOKENS
) -> float:
    """Output tok/s of a closed-loop stage under fixed timing (no batching interference)."""
    steps = events_per_request(output_tokens, timing.tokens_per_chunk)
    cycle_ns = timing.ttft_ns + (steps - 1) * timing.step_ns
    return concurrency * output_tokens * NS_PER_S / cycle_ns
